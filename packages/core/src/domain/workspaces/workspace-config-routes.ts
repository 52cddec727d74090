import * as z from 'zod';
import { apiErrorBody } from '../../http/error-schema';
import { route, type RouteDefinition } from '../../http/route';
import { workspaceConfigSchema } from './workspace-config';
import type { WorkspaceConfigService } from './workspace-config-service';
import { workspaceErrors } from './workspace-routes';
import { changeEnvelope, dataEnvelope, workspaceParams } from './workspace-schemas';
import { lazySchema } from '../lazy-schema';

const brokenFile = 'the patch, or the configuration file on disk, is invalid: details name each problem (with line and column in the file)';

/** docs/api.md#workspace-config. */
export function workspaceConfigRoutes(config: WorkspaceConfigService): RouteDefinition[] {
  return [
    route({
      method: 'GET',
      path: '/workspace/{workspaceId}/config',
      tag: 'workspaces',
      summary: 'Get the configuration of a workspace (.runloom/workspace-config.runloom.yaml; {} without the file)',
      params: workspaceParams,
      responses: {
        200: { description: 'the configuration', schema: dataEnvelope(workspaceConfigSchema) },
        400: { description: brokenFile, schema: apiErrorBody },
        404: workspaceErrors[404],
        409: { description: 'the configuration path is a directory', schema: apiErrorBody },
      },
      handle: async ({ principal, params }) => ({ status: 200, body: { data: await config.get(principal.accountId, params.workspaceId) } }),
    }),
    route({
      method: 'PATCH',
      path: '/workspace/{workspaceId}/config',
      tag: 'workspaces',
      summary: 'Deep-merge a change into the configuration: objects merge, arrays replace, null deletes; comments and key order are kept',
      params: workspaceParams,
      body: {
        json: lazySchema(() =>
          z
            .record(z.string(), z.unknown(), { error: 'the body must be a JSON object of the keys to change' })
            .meta({ id: 'WorkspaceConfigPatch', examples: [{ models: { default: { provider: 'openai', model: 'gpt-4o' } } }] }),
        ),
      },
      responses: {
        200: { description: 'the configuration after the change', schema: changeEnvelope(workspaceConfigSchema) },
        400: { description: brokenFile, schema: apiErrorBody },
        404: workspaceErrors[404],
        409: { description: 'the workspace is archived or deleted, or the configuration path is a directory', schema: apiErrorBody },
        413: { description: 'the configuration would be over 1 MiB', schema: apiErrorBody },
      },
      handle: async ({ principal, params, body }) => ({
        status: 200,
        body: { message: 'workspace configuration updated', data: await config.patch(principal.accountId, params.workspaceId, body) },
      }),
    }),
  ];
}
