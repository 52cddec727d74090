import { z } from 'zod';
import { apiErrorBody } from '../../http/error-schema';
import { route, type RouteDefinition } from '../../http/route';
import { CREDENTIALS_DESCRIPTION } from './provider-credentials';
import { PROVIDER_NAMES } from '../../ports/provider-names';
import type { ProviderService } from './provider-service';

const providerParams = z.object({
  // A plain string here: a name outside the seven is a 400 (DESIGN 2.5), not the router's 404.
  provider: z.string().meta({ enum: [...PROVIDER_NAMES], description: 'one of the seven provider names' }),
});

const providerConfig = z.object({
  provider: z.enum(PROVIDER_NAMES),
  enabled: z.boolean(),
  credentials: z.record(z.string(), z.string()).describe('secret values masked: only their last 4 characters show'),
  created_at: z.string(),
  updated_at: z.string(),
}).meta({ id: 'Provider' });

// Loose: the service refuses a credential field sent beside `credentials` (a top-level base_url) by name.
const putBody = z.looseObject({
  enabled: z.boolean(),
  credentials: z.record(z.string(), z.unknown()).default({}).describe(CREDENTIALS_DESCRIPTION),
}).meta({ id: 'ProviderUpdate' });

const responses = {
  badRequest: { description: 'unknown provider name or invalid credentials', schema: apiErrorBody },
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
        200: { description: 'configurations in provider order', schema: z.object({ data: z.array(providerConfig) }) },
        401: responses.unauthorized,
      },
      handle: async ({ principal }) => ({ status: 200, body: { data: await providers.list(principal.accountId) } }),
    }),
    route({
      method: 'PUT',
      path: '/v1/llm-provider/{provider}',
      tag: 'providers',
      summary: 'Create or replace a provider configuration; credentials are encrypted at rest',
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
        200: { description: 'deleted', schema: z.object({ provider: z.enum(PROVIDER_NAMES) }) },
        400: { description: 'unknown provider name', schema: apiErrorBody },
        401: responses.unauthorized,
        404: {
          description: 'no configuration for this provider',
          schema: z.object({ error: z.object({ code: z.literal('NOT_FOUND'), message: z.string() }) }),
        },
      },
      handle: async ({ principal, params }) => {
        if (await providers.delete(principal.accountId, params.provider)) return { status: 200, body: { provider: params.provider } };
        // SPEC's one error that is an object: {error: {code, message}} instead of {error: string}.
        return {
          status: 404,
          body: { error: { code: 'NOT_FOUND', message: `no configuration for provider ${params.provider} in this account` } },
        };
      },
    }),
  ];
}
