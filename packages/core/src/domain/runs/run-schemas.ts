import * as z from 'zod';
import { pageFields, pageQueryFields } from '../input/page-query';
import { CALLBACK_STATUSES, RUN_STATUSES, TELEMETRY_STRATEGIES } from './run-record';
import { lazy } from '../lazy';
import { lazySchema } from '../lazy-schema';

/** Request and response shapes of the runs API; the router validates with them and OpenAPI shows them. */

/** RFC 9110 field name; values may not hold line breaks (they would split the header). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const embeddedResource = lazySchema(() =>
  z.object({
    name: z.string().min(1, 'name must not be empty').describe('the placeholder this resource fills'),
    resource: z
      .union([z.string().min(1, 'give a resource id'), z.looseObject({ id: z.string().min(1, 'give a resource id') })], {
        error: 'resource must be a resource id or an object with an id',
      })
      .describe('a resource id, or an object with its id'),
  }),
);

/** The resources of a run: the run request's, and a process task's of type runnable. */
export const runResourcesSchema = lazy(() => z.array(embeddedResource).max(100, 'at most 100 resources per run').default([]));

export const runRequestSchema = lazySchema(() =>
  z
    .object({
      resources: runResourcesSchema(),
      timeout_seconds: z.int('timeout_seconds must be an integer or null').nullable().default(null).describe('null or below 1: no timeout'),
      telemetry_strategy: z.enum(TELEMETRY_STRATEGIES).default('default'),
      callback_url: z.string().max(2048, 'callback_url must be at most 2048 characters').nullable().default(null),
      callback_headers: z
        .record(
          z.string().regex(HEADER_NAME, 'a header name holds only letters, digits and !#$%&\'*+.^_`|~-'),
          z.string().max(8192).refine((value) => !/[\r\n\0]/.test(value), 'a header value must not contain line breaks'),
          {
            // Only the record's own type error gets this message; a bad header name keeps its rule.
            error: (issue) =>
              issue.code === 'invalid_type'
                ? 'callback_headers must be an object of strings'
                : issue.code === 'invalid_key'
                  ? issue.issues?.[0]?.message
                  : undefined,
          },
        )
        .default({})
        .describe('sent with the callback; never echoed back'),
    })
    .meta({ id: 'RunRequest' }),
);
export type RunRequest = z.input<typeof runRequestSchema>;
export type ParsedRunRequest = z.output<typeof runRequestSchema>;

export const RUN_MODES = ['async', 'sync'] as const;
export type RunMode = (typeof RUN_MODES)[number];

export const runModeQuery = lazySchema(() =>
  z.object({
    mode: z.enum(RUN_MODES, { error: 'mode must be async or sync' }).default('async'),
  }),
);

export const runIdParams = lazySchema(() => z.object({ id: z.string().describe('run id') }));
export const runnableRunsParams = lazySchema(() => z.object({ id: z.string().describe('runnable id') }));

/** What `RunService.list` takes: the filter with the page as numbers. */
export const listRunsFilter = lazy(() =>
  z.object({
    runnable_id: z.string().optional(),
    status: z.enum(RUN_STATUSES, { error: `status must be one of ${RUN_STATUSES.join(', ')}` }).optional(),
    ...pageFields(),
  }),
);
export type ListRunsQuery = z.input<ReturnType<typeof listRunsFilter>>;

/** The same filter as query parameters. */
export const listRunsQuery = lazySchema(() => listRunsFilter().extend(pageQueryFields()));

const runError = lazySchema(() => z.object({ code: z.string(), message: z.string() }));

export const runViewSchema = lazySchema(() =>
  z.object({
    id: z.string(),
    account_id: z.string(),
    runnable_id: z.string(),
    runnable_sha256: z.string(),
    status: z.enum(RUN_STATUSES),
    created_at: z.string(),
    started_at: z.string().nullable(),
    completed_at: z.string().nullable(),
    timeout_seconds: z.int().nullable(),
    telemetry_strategy: z.enum(TELEMETRY_STRATEGIES),
    telemetry_enabled: z.boolean(),
    resources: z.array(
      z.object({
        name: z.string(),
        resource: z.object({ id: z.string(), name: z.string(), mime_type: z.string(), sha256: z.string(), size_bytes: z.int() }),
      }),
    ),
    outputs: z.array(
      z.object({ name: z.string(), mime_type: z.string(), text_value: z.string().optional(), object_value: z.unknown().optional() }),
    ),
    error: runError.nullable(),
    usage: z.object({ input_tokens: z.int(), output_tokens: z.int() }),
    callback: z
      .object({ url: z.string(), status: z.enum(CALLBACK_STATUSES), attempts: z.int(), last_status_code: z.int().nullable() })
      .nullable(),
    trace: z
      .object({
        steps: z.array(
          z.object({
            name: z.string(),
            kind: z.string(),
            started_at: z.string(),
            ended_at: z.string(),
            latency_ms: z.number(),
            status: z.enum(['succeeded', 'failed']),
            error: runError.nullable(),
          }),
        ),
        model_calls: z.array(
          z.object({
            step: z.string(),
            provider: z.string(),
            model: z.string(),
            started_at: z.string(),
            latency_ms: z.number(),
            input_tokens: z.int(),
            output_tokens: z.int(),
            finish_reason: z.string().nullable(),
            error: runError.nullable(),
          }),
        ),
      })
      .nullable()
      .describe('steps and model calls with latencies and tokens, when telemetry is on'),
  }).meta({ id: 'Run' }),
);
