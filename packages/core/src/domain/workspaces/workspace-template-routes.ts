import * as z from 'zod';
import { apiErrorBody } from '../../http/error-schema';
import { route, type RouteDefinition } from '../../http/route';
import { pageQuery } from '../input/page-query';
import { changeEnvelope, dataEnvelope } from './workspace-schemas';
import { createTemplateBody, workspaceTemplateSchema, workspaceTemplateSummarySchema } from './workspace-template-schemas';
import type { WorkspaceTemplateService } from './workspace-template-service';
import { lazySchema } from '../lazy-schema';

/** docs/api.md#workspace-templates. */
export function workspaceTemplateRoutes(templates: WorkspaceTemplateService): RouteDefinition[] {
  return [
    route({
      method: 'GET',
      path: '/workspaces/templates',
      tag: 'workspaces',
      summary: 'List the workspace templates of the account, newest first (files by path and size)',
      query: pageQuery,
      responses: { 200: { description: 'the templates', schema: lazySchema(() => dataEnvelope(z.array(workspaceTemplateSummarySchema))) } },
      handle: async ({ principal, query }) => ({ status: 200, body: { data: await templates.list(principal.accountId, query) } }),
    }),
    route({
      method: 'POST',
      path: '/workspaces/templates',
      tag: 'workspaces',
      summary: 'Create a workspace template: files, or a git repository (url and ref) to clone',
      body: { json: createTemplateBody },
      responses: {
        201: { description: 'created', schema: changeEnvelope(workspaceTemplateSchema) },
        400: { description: 'invalid fields (unsafe or repeated paths, both or neither of files and source, too much content)', schema: apiErrorBody },
      },
      handle: async ({ principal, body }) => ({
        status: 201,
        body: { message: 'workspace template created', data: await templates.create(principal.accountId, body) },
      }),
    }),
    route({
      method: 'GET',
      path: '/workspaces/templates/{templateId}',
      tag: 'workspaces',
      summary: 'Get a workspace template with its files',
      params: lazySchema(() => z.object({ templateId: z.uuid() })),
      responses: {
        200: { description: 'the template', schema: dataEnvelope(workspaceTemplateSchema) },
        404: { description: 'no such template in this account', schema: apiErrorBody },
      },
      handle: async ({ principal, params }) => ({ status: 200, body: { data: await templates.get(principal.accountId, params.templateId) } }),
    }),
  ];
}
