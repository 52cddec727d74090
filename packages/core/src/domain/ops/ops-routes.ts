import * as z from 'zod';
import { apiErrorBody } from '../../http/error-schema';
import { textResponse } from '../../http/http-result';
import { buildOpenApiDocument } from '../../http/openapi';
import { route, type RouteDefinition } from '../../http/route';
import type { Metrics } from '../../ports/metrics';
import { requireMetricsToken } from './metrics-access';
import { lazySchema } from '../lazy-schema';

export interface Readiness {
  /** Each check's name and whether it passes: the store open, the job queue running, … */
  check(): Promise<Record<string, boolean>>;
}

/**
 * Health, readiness, metrics and the OpenAPI document. `allRoutes` is read when the document is
 * asked for, so it lists every route the router serves, these included.
 */
export function opsRoutes(deps: {
  metrics: Metrics;
  readiness: Readiness;
  basePath: string;
  /** The operators' credential for `/metrics`; undefined leaves `/metrics` off (403). */
  metricsToken: string | undefined;
  allRoutes: () => readonly RouteDefinition[];
}): RouteDefinition[] {
  let openApiDocument: string | undefined;
  return [
    route({
      method: 'GET',
      path: '/healthz',
      public: true,
      tag: 'ops',
      summary: 'Liveness: the process answers',
      responses: { 200: { description: 'alive', schema: lazySchema(() => z.object({ status: z.literal('ok') })) } },
      handle: async () => ({ status: 200, body: { status: 'ok' } }),
    }),
    route({
      method: 'GET',
      path: '/readyz',
      public: true,
      tag: 'ops',
      summary: 'Readiness: the store is open and the job queue runs',
      responses: {
        200: { description: 'ready', schema: lazySchema(() => z.object({ status: z.literal('ready'), checks: z.record(z.string(), z.boolean()) })) },
        503: { description: 'not ready', schema: lazySchema(() => z.object({ status: z.literal('not_ready'), checks: z.record(z.string(), z.boolean()) })) },
      },
      handle: async () => {
        const checks = await deps.readiness.check();
        const ready = Object.values(checks).every(Boolean);
        return { status: ready ? 200 : 503, body: { status: ready ? 'ready' : 'not_ready', checks } };
      },
    }),
    route({
      method: 'GET',
      path: '/metrics',
      // Not an account's route: it checks the operators' metrics token itself.
      public: true,
      tag: 'ops',
      summary:
        'Prometheus metrics: requests by route and status, runs by status, queue depth, open streams. For operators: send Authorization: Bearer <metrics token> (--metrics-token), never an account token',
      responses: {
        200: { description: 'Prometheus text exposition format', contentType: 'text/plain' },
        401: { description: 'the metrics token is missing or wrong (an account token is refused too)', schema: apiErrorBody },
        403: { description: 'no metrics token is configured, so /metrics is off; the message says how to enable it', schema: apiErrorBody },
      },
      handle: async ({ request }) => {
        await requireMetricsToken(request.headers.get('authorization'), deps.metricsToken);
        return textResponse(200, await deps.metrics.render(), { 'content-type': deps.metrics.contentType });
      },
    }),
    route({
      method: 'GET',
      path: '/v1/openapi.json',
      public: true,
      tag: 'ops',
      summary: 'This OpenAPI 3.1 document',
      responses: { 200: { description: 'the OpenAPI document', contentType: 'application/json' } },
      handle: async () => {
        openApiDocument ??= JSON.stringify(buildOpenApiDocument(deps.allRoutes(), deps.basePath));
        return textResponse(200, openApiDocument, { 'content-type': 'application/json; charset=utf-8' });
      },
    }),
  ];
}
