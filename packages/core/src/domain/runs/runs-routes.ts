import * as z from 'zod';
import { apiErrorBody } from '../../http/error-schema';
import { route, type RouteDefinition } from '../../http/route';
import type { RunService } from './run-service';
import { listRunsQuery, runIdParams, runModeQuery, runnableRunsParams, runRequestSchema, runViewSchema } from './run-schemas';
import { lazySchema } from '../lazy-schema';

const invalid = { description: 'invalid input: details say what to fix', schema: apiErrorBody };
const runNotFound = { description: 'no run with this id in the account', schema: apiErrorBody };

/** `POST /v1/runnable/{id}/runs`, `GET /v1/run/{id}`, `GET /v1/runs`, `POST /v1/run/{id}/cancel`. */
export function runsRoutes(runs: RunService): RouteDefinition[] {
  return [
    route({
      method: 'POST',
      path: '/v1/runnable/{id}/runs',
      tag: 'runs',
      summary: 'Run a runnable: mode=async (default) answers 202 with the run id; mode=sync waits and answers the finished run',
      params: runnableRunsParams,
      query: runModeQuery,
      body: { json: runRequestSchema, optional: true },
      responses: {
        200: { description: 'mode=sync: the finished run', schema: runViewSchema },
        202: { description: 'mode=async: the run is queued', schema: lazySchema(() => z.object({ id: z.string() })) },
        400: invalid,
        404: { description: 'no such runnable, or a resource id that is not the account’s', schema: apiErrorBody },
      },
      handle: async ({ principal, params, query, body, signal }) => {
        // The router has parsed the body with runRequestSchema (an absent body as {}).
        const submitted = await runs.submitParsed(principal.accountId, params.id, body, query.mode, signal);
        return submitted.mode === 'async' ? { status: 202, body: { id: submitted.id } } : { status: 200, body: submitted.run };
      },
    }),
    route({
      method: 'GET',
      path: '/v1/run/{id}',
      tag: 'runs',
      summary: 'Read a run: status, outputs, error, usage, callback state and, with telemetry, its trace',
      params: runIdParams,
      responses: { 200: { description: 'the run', schema: runViewSchema }, 404: runNotFound },
      handle: async ({ principal, params }) => ({ status: 200, body: await runs.get(principal.accountId, params.id) }),
    }),
    route({
      method: 'GET',
      path: '/v1/runs',
      tag: 'runs',
      summary: "The account's runs, newest first, filtered by runnable_id and status",
      query: listRunsQuery,
      responses: { 200: { description: 'the runs', schema: lazySchema(() => z.array(runViewSchema)) }, 400: invalid },
      handle: async ({ principal, query }) => ({ status: 200, body: await runs.list(principal.accountId, query) }),
    }),
    route({
      method: 'POST',
      path: '/v1/run/{id}/cancel',
      tag: 'runs',
      summary: 'Cancel a queued or running run (a running model call is aborted); 409 once it has finished',
      params: runIdParams,
      responses: {
        200: { description: 'the cancelled run', schema: runViewSchema },
        404: runNotFound,
        409: { description: 'the run has already finished; the message names its status', schema: apiErrorBody },
      },
      handle: async ({ principal, params }) => ({ status: 200, body: await runs.cancel(principal.accountId, params.id) }),
    }),
  ];
}
