import * as z from 'zod';
import { apiErrorBody } from '../../http/error-schema';
import { route, type RouteDefinition } from '../../http/route';
import type { WebhookSecretService } from './webhook-secret-service';
import { lazySchema } from '../lazy-schema';

const secretBody = lazySchema(() =>
  z.object({ secret: z.string().describe('whsec_ followed by base64 (Standard Webhooks)') }).meta({ id: 'WebhookSecret' }),
);
const unauthorized = { description: 'missing or invalid bearer token', schema: apiErrorBody };

export function webhookSecretRoutes(secrets: WebhookSecretService): RouteDefinition[] {
  return [
    route({
      method: 'GET',
      path: '/v1/webhook-secret',
      tag: 'webhooks',
      summary: 'The secret that signs run callbacks (created on first read)',
      responses: { 200: { description: 'the current secret', schema: secretBody }, 401: unauthorized },
      handle: async ({ principal }) => ({
        status: 200,
        body: { secret: await secrets.get(principal.accountId) },
        headers: { 'cache-control': 'no-store' },
      }),
    }),
    route({
      method: 'POST',
      path: '/v1/webhook-secret/rotate',
      tag: 'webhooks',
      summary: 'Replace the webhook secret; callbacks are signed with the new one from now on',
      responses: { 200: { description: 'the new secret', schema: secretBody }, 401: unauthorized },
      handle: async ({ principal }) => ({
        status: 200,
        body: { secret: await secrets.rotate(principal.accountId) },
        headers: { 'cache-control': 'no-store' },
      }),
    }),
  ];
}
