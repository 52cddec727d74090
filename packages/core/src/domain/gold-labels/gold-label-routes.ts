import * as z from 'zod';
import { apiErrorBody } from '../../http/error-schema';
import { pageQuery } from '../input/page-query';
import { route, type RouteDefinition } from '../../http/route';
import { createGoldLabelBody, goldLabelSchema, updateGoldLabelBody } from './gold-label-schemas';
import type { GoldLabelService } from './gold-label-service';
import { lazySchema } from '../lazy-schema';

const runParams = lazySchema(() => z.object({ run_id: z.uuid() }));
const labelParams = lazySchema(() => z.object({ run_id: z.uuid(), gold_label_id: z.uuid() }));

const errors = {
  400: { description: 'invalid fields, or output_resource_name names no output of the run', schema: apiErrorBody },
  401: { description: 'missing or invalid bearer token', schema: apiErrorBody },
  404: { description: 'no such run or gold label in this account', schema: apiErrorBody },
};

export function goldLabelRoutes(goldLabels: GoldLabelService): RouteDefinition[] {
  return [
    route({
      method: 'POST',
      path: '/v1/run/{run_id}/gold-labels',
      tag: 'gold-labels',
      summary: 'Add a gold label (expected output) for an output of a finished run',
      params: runParams,
      body: { json: createGoldLabelBody },
      responses: {
        201: { description: 'created', schema: goldLabelSchema },
        ...errors,
        409: { description: 'the run has not finished yet', schema: apiErrorBody },
      },
      handle: async ({ principal, params, body }) => ({ status: 201, body: await goldLabels.create(principal.accountId, params.run_id, body, principal.clientId) }),
    }),
    route({
      method: 'GET',
      path: '/v1/run/{run_id}/gold-labels',
      tag: 'gold-labels',
      summary: 'List the gold labels of a run, oldest first',
      params: runParams,
      query: pageQuery,
      responses: { 200: { description: 'the labels', schema: lazySchema(() => z.array(goldLabelSchema)) }, ...errors },
      handle: async ({ principal, params, query }) => ({ status: 200, body: await goldLabels.list(principal.accountId, params.run_id, query) }),
    }),
    route({
      method: 'GET',
      path: '/v1/run/{run_id}/gold-label/{gold_label_id}',
      tag: 'gold-labels',
      summary: 'Get one gold label',
      params: labelParams,
      responses: { 200: { description: 'the label', schema: goldLabelSchema }, 401: errors[401], 404: errors[404] },
      handle: async ({ principal, params }) => ({
        status: 200,
        body: await goldLabels.get(principal.accountId, params.run_id, params.gold_label_id),
      }),
    }),
    route({
      method: 'PATCH',
      path: '/v1/run/{run_id}/gold-label/{gold_label_id}',
      tag: 'gold-labels',
      summary: 'Change a gold label; null clears text_value or object_value (exactly one must remain)',
      params: labelParams,
      body: { json: updateGoldLabelBody },
      responses: {
        200: { description: 'the changed label', schema: goldLabelSchema },
        ...errors,
        409: { description: 'the run has not finished yet', schema: apiErrorBody },
      },
      handle: async ({ principal, params, body }) => ({
        status: 200,
        body: await goldLabels.update(principal.accountId, params.run_id, params.gold_label_id, body, principal.clientId),
      }),
    }),
    route({
      method: 'DELETE',
      path: '/v1/run/{run_id}/gold-label/{gold_label_id}',
      tag: 'gold-labels',
      summary: 'Delete a gold label',
      params: labelParams,
      responses: { 200: { description: 'deleted', schema: lazySchema(() => z.object({ id: z.uuid() })) }, 401: errors[401], 404: errors[404] },
      handle: async ({ principal, params }) => {
        await goldLabels.delete(principal.accountId, params.run_id, params.gold_label_id);
        return { status: 200, body: { id: params.gold_label_id } };
      },
    }),
  ];
}
