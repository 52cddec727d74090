import * as z from 'zod';
import { apiErrorBody } from '../../http/error-schema';
import { pageQuery } from '../input/page-query';
import { route, type RouteDefinition } from '../../http/route';
import { createEvaluationBody, evaluationSchema } from './evaluation-schemas';
import type { EvaluationService } from './evaluation-service';
import { lazySchema } from '../lazy-schema';

const runParams = lazySchema(() => z.object({ run_id: z.uuid() }));
const evaluationParams = lazySchema(() => z.object({ run_id: z.uuid(), evaluation_id: z.uuid() }));

const unauthorized = { description: 'missing or invalid bearer token', schema: apiErrorBody };
const notFound = { description: 'no such run, gold label or evaluation in this account', schema: apiErrorBody };

export function evaluationRoutes(evaluations: EvaluationService): RouteDefinition[] {
  return [
    route({
      method: 'POST',
      path: '/v1/run/{run_id}/evaluations',
      tag: 'evaluations',
      summary: 'Score the output a gold label names against the label (exact, contains, regex, json_equal, json_subset)',
      params: runParams,
      body: { json: createEvaluationBody },
      responses: {
        201: { description: 'the evaluation', schema: evaluationSchema },
        400: { description: 'invalid fields, or a label the method cannot use (invalid or too slow pattern, text that is not JSON)', schema: apiErrorBody },
        401: unauthorized,
        404: notFound,
        409: { description: 'the run has not finished yet', schema: apiErrorBody },
      },
      handle: async ({ principal, params, body }) => ({ status: 201, body: await evaluations.create(principal.accountId, params.run_id, body) }),
    }),
    route({
      method: 'GET',
      path: '/v1/run/{run_id}/evaluations',
      tag: 'evaluations',
      summary: 'List the evaluations of a run, oldest first',
      params: runParams,
      query: pageQuery,
      responses: { 200: { description: 'the evaluations', schema: lazySchema(() => z.array(evaluationSchema)) }, 400: { description: 'invalid limit or offset', schema: apiErrorBody }, 401: unauthorized, 404: notFound },
      handle: async ({ principal, params, query }) => ({ status: 200, body: await evaluations.list(principal.accountId, params.run_id, query) }),
    }),
    route({
      method: 'GET',
      path: '/v1/run/{run_id}/evaluation/{evaluation_id}',
      tag: 'evaluations',
      summary: 'Get one evaluation',
      params: evaluationParams,
      responses: { 200: { description: 'the evaluation', schema: evaluationSchema }, 401: unauthorized, 404: notFound },
      handle: async ({ principal, params }) => ({ status: 200, body: await evaluations.get(principal.accountId, params.run_id, params.evaluation_id) }),
    }),
    route({
      method: 'DELETE',
      path: '/v1/run/{run_id}/evaluation/{evaluation_id}',
      tag: 'evaluations',
      summary: 'Delete an evaluation (irreversible)',
      params: evaluationParams,
      responses: { 200: { description: 'deleted', schema: lazySchema(() => z.object({ id: z.uuid() })) }, 401: unauthorized, 404: notFound },
      handle: async ({ principal, params }) => {
        await evaluations.delete(principal.accountId, params.run_id, params.evaluation_id);
        return { status: 200, body: { id: params.evaluation_id } };
      },
    }),
  ];
}
