import * as z from 'zod';
import { apiErrorBody } from '../../http/error-schema';
import { route, type RouteDefinition } from '../../http/route';
import { pageQuery } from '../input/page-query';
import type { WorkspaceMetadataService } from './workspace-metadata';
import {
  changeEnvelope,
  createLifecycleEventBody,
  createWorkspaceBody,
  dataEnvelope,
  lifecycleEventSchema,
  updateWorkspaceBody,
  workspaceMetadataSchema,
  workspaceParams,
  workspaceSchema,
} from './workspace-schemas';
import type { WorkspaceService } from './workspace-service';
import { lazySchema } from '../lazy-schema';

const TAG = 'workspaces';

export const workspaceErrors = {
  400: { description: 'invalid fields, each named in details', schema: apiErrorBody },
  404: { description: 'no such workspace in this account', schema: apiErrorBody },
  409: { description: 'the workspace is archived or deleted, and refuses changes', schema: apiErrorBody },
};

/** docs/api.md#workspaces and #workspace-lifecycle. */
export function workspaceRoutes(workspaces: WorkspaceService, metadata: WorkspaceMetadataService): RouteDefinition[] {
  return [
    route({
      method: 'GET',
      path: '/workspaces',
      tag: TAG,
      summary: 'List the workspaces of the account, newest first (deleted ones are left out)',
      query: pageQuery,
      responses: { 200: { description: 'the workspaces', schema: lazySchema(() => dataEnvelope(z.array(workspaceSchema))) } },
      handle: async ({ principal, query }) => ({ status: 200, body: { data: await workspaces.list(principal.accountId, query) } }),
    }),
    route({
      method: 'POST',
      path: '/workspaces',
      tag: TAG,
      summary: "Create a workspace, from a template's files when template_id is given",
      body: { json: createWorkspaceBody },
      responses: {
        201: { description: 'created', schema: changeEnvelope(workspaceSchema) },
        400: workspaceErrors[400],
        404: { description: 'no such workspace template in this account', schema: apiErrorBody },
      },
      handle: async ({ principal, body }) => ({
        status: 201,
        body: { message: 'workspace created', data: await workspaces.create(principal.accountId, body, principal.clientId) },
      }),
    }),
    route({
      method: 'GET',
      path: '/workspace/{workspaceId}',
      tag: TAG,
      summary: 'Get a workspace',
      params: workspaceParams,
      responses: { 200: { description: 'the workspace', schema: dataEnvelope(workspaceSchema) }, 404: workspaceErrors[404] },
      handle: async ({ principal, params }) => ({ status: 200, body: { data: await workspaces.require(principal.accountId, params.workspaceId) } }),
    }),
    route({
      method: 'PATCH',
      path: '/workspace/{workspaceId}',
      tag: TAG,
      summary: 'Change the name, description or metadata of a workspace',
      params: workspaceParams,
      body: { json: updateWorkspaceBody },
      responses: { 200: { description: 'the changed workspace', schema: changeEnvelope(workspaceSchema) }, ...workspaceErrors },
      handle: async ({ principal, params, body }) => ({
        status: 200,
        body: { message: 'workspace updated', data: await workspaces.update(principal.accountId, params.workspaceId, body) },
      }),
    }),
    route({
      method: 'GET',
      path: '/workspace/{workspaceId}/metadata',
      tag: TAG,
      summary: 'A summary for display: files and bytes, threads, commands, process runs by status, last activity',
      params: workspaceParams,
      responses: { 200: { description: 'the summary', schema: dataEnvelope(workspaceMetadataSchema) }, 404: workspaceErrors[404] },
      handle: async ({ principal, params }) => ({ status: 200, body: { data: await metadata.summary(principal.accountId, params.workspaceId) } }),
    }),
    route({
      method: 'POST',
      path: '/workspace/{workspaceId}/lifecycle-events',
      tag: TAG,
      summary: 'Record a lifecycle event; archived/unarchived set the status, deleted/restored hide and bring back the workspace',
      params: workspaceParams,
      body: { json: createLifecycleEventBody },
      responses: {
        201: { description: 'recorded', schema: changeEnvelope(lifecycleEventSchema) },
        400: { description: 'an unknown event (the message lists the values) or invalid notes', schema: apiErrorBody },
        404: workspaceErrors[404],
      },
      handle: async ({ principal, params, body }) => ({
        status: 201,
        body: {
          message: `lifecycle event '${body.event}' recorded`,
          data: await workspaces.recordLifecycleEvent(principal.accountId, params.workspaceId, body.event, body.notes ?? null, principal.clientId),
        },
      }),
    }),
    route({
      method: 'GET',
      path: '/workspace/{workspaceId}/lifecycle-events',
      tag: TAG,
      summary: 'List the lifecycle events of a workspace, oldest first',
      params: workspaceParams,
      query: pageQuery,
      responses: { 200: { description: 'the events', schema: lazySchema(() => dataEnvelope(z.array(lifecycleEventSchema))) }, 404: workspaceErrors[404] },
      handle: async ({ principal, params, query }) => ({
        status: 200,
        body: { data: await workspaces.listLifecycleEvents(principal.accountId, params.workspaceId, query) },
      }),
    }),
  ];
}
