import * as z from 'zod';
import { apiErrorBody } from '../../http/error-schema';
import { route, type RouteDefinition } from '../../http/route';
import {
  createRunnableInput,
  listRunnablesQuery,
  runnableIdParams,
  runnableSchema,
  runnableVersionSchema,
  updateRunnableInput,
} from './runnable-schemas';
import type { RunnableService } from './runnable-service';
import { lazySchema } from '../lazy-schema';

const invalid = { description: 'invalid input: details say what to fix', schema: apiErrorBody };
const notFound = { description: 'no runnable with this id in the account', schema: apiErrorBody };

/** `POST /v1/runnables`, `GET /v1/runnables`, `GET|PATCH|DELETE /v1/runnable/{id}` and its versions. */
export function runnablesRoutes(runnables: RunnableService): RouteDefinition[] {
  return [
    route({
      method: 'POST',
      path: '/v1/runnables',
      tag: 'runnables',
      summary: 'Create a runnable from YAML or JSON configuration (config_content) or an object (config_content_parsed)',
      body: { json: createRunnableInput },
      responses: { 201: { description: 'the runnable', schema: runnableSchema }, 400: invalid },
      handle: async ({ principal, body }) => ({ status: 201, body: await runnables.create(principal.accountId, body, principal.clientId) }),
    }),
    route({
      method: 'GET',
      path: '/v1/runnables',
      tag: 'runnables',
      summary: "The account's runnables, oldest first, filtered by type and tags (all given tags must be present)",
      query: listRunnablesQuery,
      responses: { 200: { description: 'the runnables', schema: lazySchema(() => z.array(runnableSchema)) }, 400: invalid },
      handle: async ({ principal, query }) => ({ status: 200, jsonText: await runnables.listJson(principal.accountId, query) }),
    }),
    route({
      method: 'GET',
      path: '/v1/runnable/{id}',
      tag: 'runnables',
      summary: 'Read a runnable',
      params: runnableIdParams,
      responses: { 200: { description: 'the runnable', schema: runnableSchema }, 404: notFound },
      handle: async ({ principal, params }) => ({ status: 200, jsonText: await runnables.getJson(principal.accountId, params.id) }),
    }),
    route({
      method: 'PATCH',
      path: '/v1/runnable/{id}',
      tag: 'runnables',
      summary: 'Change name, description, tags or configuration; a changed configuration adds a version',
      params: runnableIdParams,
      body: { json: updateRunnableInput },
      responses: { 200: { description: 'the changed runnable', schema: runnableSchema }, 400: invalid, 404: notFound },
      handle: async ({ principal, params, body }) => ({ status: 200, body: await runnables.update(principal.accountId, params.id, body, principal.clientId) }),
    }),
    route({
      method: 'DELETE',
      path: '/v1/runnable/{id}',
      tag: 'runnables',
      summary: 'Delete a runnable and its history; its runs stay readable',
      params: runnableIdParams,
      responses: { 200: { description: 'deleted', schema: lazySchema(() => z.object({ id: z.uuid() })) }, 404: notFound },
      handle: async ({ principal, params }) => {
        await runnables.delete(principal.accountId, params.id);
        return { status: 200, body: { id: params.id } };
      },
    }),
    route({
      method: 'GET',
      path: '/v1/runnable/{id}/versions',
      tag: 'runnables',
      summary: 'The configuration history of a runnable, version 1 first',
      params: runnableIdParams,
      responses: { 200: { description: 'the versions', schema: lazySchema(() => z.array(runnableVersionSchema)) }, 404: notFound },
      handle: async ({ principal, params }) => ({ status: 200, body: await runnables.listVersions(principal.accountId, params.id) }),
    }),
  ];
}
