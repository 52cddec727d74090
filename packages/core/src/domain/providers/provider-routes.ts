import * as z from 'zod';
import { apiErrorBody } from '../../http/error-schema';
import { route, type RouteDefinition } from '../../http/route';
import { CREDENTIALS_DESCRIPTION } from './provider-credentials';
import { PROVIDER_NAMES } from '../../ports/provider-names';
import type { ProviderService } from './provider-service';
import { lazy } from '../lazy';
import { lazySchema } from '../lazy-schema';

const providerParams = lazySchema(() =>
  z.object({
    // A plain string here: a name outside the seven is a 400 (docs/api.md#providers), not the router's 404.
    provider: z.string().meta({ enum: [...PROVIDER_NAMES], description: 'one of the seven provider names' }),
  }),
);

/** Bounds of the limits: whole numbers, generous enough for any vendor tier. */
export const MAX_PROVIDER_CONCURRENCY = 100_000;
export const MAX_REQUESTS_PER_MINUTE = 10_000_000;

/** A limit of the account's calls at a vendor: a whole number from 1 to `max`, or null for none. */
function callLimit(field: string, max: number, description: string) {
  return z
    .number()
    .int(`${field} must be a whole number`)
    .min(1, `${field} must be at least 1`)
    .max(max, `${field} must be at most ${max}`)
    .nullable()
    .describe(description);
}

const maxConcurrency = lazy(() =>
  callLimit('max_concurrency', MAX_PROVIDER_CONCURRENCY, 'calls of this account’s runs at this vendor at once; null or absent: no limit of its own'),
);
const requestsPerMinute = lazy(() =>
  callLimit(
    'requests_per_minute',
    MAX_REQUESTS_PER_MINUTE,
    'calls of this account’s runs started per minute (bursts of a minute’s worth); null or absent: no limit of its own',
  ),
);

const providerConfig = lazySchema(() =>
  z.object({
    provider: z.enum(PROVIDER_NAMES),
    enabled: z.boolean(),
    credentials: z.record(z.string(), z.string()).describe('secret values masked: only their last 4 characters show'),
    max_concurrency: maxConcurrency(),
    requests_per_minute: requestsPerMinute(),
    created_at: z.string(),
    updated_at: z.string(),
  }).meta({ id: 'Provider' }),
);

// Loose: the service refuses a credential field sent beside `credentials` (a top-level base_url) by name.
const putBody = lazySchema(() =>
  z.looseObject({
    enabled: z.boolean(),
    credentials: z.record(z.string(), z.unknown()).default({}).describe(CREDENTIALS_DESCRIPTION),
    // Runs waiting for these limits (or for a vendor's 429 back-off) hold no slot: ARCHITECTURE.md, "Run scheduling".
    max_concurrency: maxConcurrency().optional(),
    requests_per_minute: requestsPerMinute().optional(),
  }).meta({ id: 'ProviderUpdate' }),
);

const responses = {
  badRequest: { description: 'unknown provider name, invalid credentials or limits', schema: apiErrorBody },
  unauthorized: { description: 'missing or invalid bearer token', schema: apiErrorBody },
};

export function providerRoutes(providers: ProviderService): RouteDefinition[] {
  return [
    route({
      method: 'GET',
      path: '/v1/llm-providers',
      tag: 'providers',
      summary: 'List the account’s LLM provider configurations, secrets masked',
      responses: {
        200: { description: 'configurations in provider order', schema: lazySchema(() => z.object({ data: z.array(providerConfig) })) },
        401: responses.unauthorized,
      },
      handle: async ({ principal }) => ({ status: 200, body: { data: await providers.list(principal.accountId) } }),
    }),
    route({
      method: 'PUT',
      path: '/v1/llm-provider/{provider}',
      tag: 'providers',
      summary: 'Create or replace a provider configuration and its limits for this account’s runs; credentials are encrypted at rest',
      params: providerParams,
      body: { json: putBody },
      responses: {
        200: { description: 'replaced; secrets masked', schema: providerConfig },
        201: { description: 'created; secrets masked', schema: providerConfig },
        400: responses.badRequest,
        401: responses.unauthorized,
      },
      handle: async ({ principal, params, body }) => {
        const { created, config } = await providers.put(principal.accountId, params.provider, body);
        return { status: created ? 201 : 200, body: config };
      },
    }),
    route({
      method: 'DELETE',
      path: '/v1/llm-provider/{provider}',
      tag: 'providers',
      summary: 'Delete a provider configuration',
      params: providerParams,
      responses: {
        200: { description: 'deleted', schema: lazySchema(() => z.object({ provider: z.enum(PROVIDER_NAMES) })) },
        400: { description: 'unknown provider name', schema: apiErrorBody },
        401: responses.unauthorized,
        404: {
          description: 'no configuration for this provider',
          schema: lazySchema(() => z.object({ error: z.object({ code: z.literal('NOT_FOUND'), message: z.string() }) })),
        },
      },
      handle: async ({ principal, params }) => {
        if (await providers.delete(principal.accountId, params.provider)) return { status: 200, body: { provider: params.provider } };
        // The one error that is an object (docs/api.md#conventions): {error: {code, message}} instead of {error: string}.
        return {
          status: 404,
          body: { error: { code: 'NOT_FOUND', message: `no configuration for provider ${params.provider} in this account` } },
        };
      },
    }),
  ];
}
