import * as z from 'zod';
import { apiErrorBody } from '../../http/error-schema';
import { route, type RouteDefinition } from '../../http/route';
import { changeEnvelope, dataEnvelope, workspaceParams } from '../workspaces/workspace-schemas';
import {
  commitBody,
  commitResultSchema,
  connectRepositoryBody,
  gitHeadSchema,
  pullResultSchema,
  repositoryConnectionSchema,
  repositoryIntegrationSchema,
  repositoryStateSchema,
  repositoryStatusSchema,
} from './repository-schemas';
import type { RepositoryService } from './repository-service';
import { lazySchema } from '../lazy-schema';

const TAG = 'repositories';

/** The refusals of these routes (docs/api.md#repositories). */
const errors = {
  400: { description: 'invalid fields, each named in details; a URL that is not http(s) or that the egress policy refuses', schema: apiErrorBody },
  404: { description: 'no such workspace in this account, or the workspace is not connected to a repository', schema: apiErrorBody },
  409: {
    description: 'the workspace is archived; or the working copy does not allow it: not cloned yet, already cloned, uncommitted changes before a pull, a merge conflict, nothing to commit, a push that is not a fast-forward',
    schema: apiErrorBody,
  },
  422: { description: 'the remote refused the request or did not answer: wrong or missing token, no such repository or branch, unreachable, not a git server', schema: apiErrorBody },
  501: { description: "this server keeps workspace files elsewhere than on its disk, where git works", schema: apiErrorBody },
};

/** docs/api.md#repositories. */
export function repositoryRoutes(repositories: RepositoryService): RouteDefinition[] {
  const path = '/workspace/{workspaceId}/repository';
  return [
    route({
      method: 'GET',
      path: '/workspaces/repository-integrations',
      tag: TAG,
      summary: 'List the repository hosting integrations (generic git, GitHub, GitLab, Bitbucket) and how the account’s workspaces use them',
      responses: { 200: { description: 'the four integrations', schema: lazySchema(() => dataEnvelope(z.array(repositoryIntegrationSchema))) } },
      handle: async ({ principal }) => ({ status: 200, body: { data: await repositories.integrations(principal.accountId) } }),
    }),
    route({
      method: 'PUT',
      path,
      tag: TAG,
      summary: 'Connect the workspace to a git remote over HTTP(S), or replace its connection; the token is encrypted at rest and answered masked',
      params: workspaceParams,
      body: { json: connectRepositoryBody },
      responses: {
        200: { description: 'replaced', schema: changeEnvelope(repositoryConnectionSchema) },
        201: { description: 'connected', schema: changeEnvelope(repositoryConnectionSchema) },
        400: errors[400],
        404: errors[404],
        409: errors[409],
      },
      handle: async ({ principal, params, body }) => {
        const { created, connection } = await repositories.connect(principal.accountId, params.workspaceId, body);
        return { status: created ? 201 : 200, body: { message: created ? 'repository connected' : 'repository connection updated', data: connection } };
      },
    }),
    route({
      method: 'GET',
      path,
      tag: TAG,
      summary: 'Get the workspace’s repository connection and the status of its working copy',
      params: workspaceParams,
      responses: { 200: { description: 'the connection', schema: dataEnvelope(repositoryStateSchema) }, 404: errors[404], 501: errors[501] },
      handle: async ({ principal, params }) => ({ status: 200, body: { data: await repositories.get(principal.accountId, params.workspaceId) } }),
    }),
    route({
      method: 'DELETE',
      path,
      tag: TAG,
      summary: 'Disconnect the workspace from its repository and forget the token; the files, .git included, stay',
      params: workspaceParams,
      responses: { 200: { description: 'disconnected', schema: lazySchema(() => z.object({ message: z.string() })) }, 404: errors[404], 409: errors[409] },
      handle: async ({ principal, params }) => {
        await repositories.disconnect(principal.accountId, params.workspaceId);
        return { status: 200, body: { message: 'repository disconnected' } };
      },
    }),
    route({
      method: 'POST',
      path: `${path}/clone`,
      tag: TAG,
      summary: 'Clone the connected repository into the workspace; files already there stay, unless the checkout would overwrite them (409)',
      params: workspaceParams,
      responses: { 200: { description: 'cloned', schema: changeEnvelope(repositoryStateSchema) }, ...errors },
      handle: async ({ principal, params }) => ({
        status: 200,
        body: { message: 'repository cloned', data: await repositories.clone(principal.accountId, params.workspaceId) },
      }),
    }),
    route({
      method: 'POST',
      path: `${path}/pull`,
      tag: TAG,
      summary: 'Fetch the connection’s branch and merge it into the working copy (which must have no uncommitted changes)',
      params: workspaceParams,
      responses: { 200: { description: 'pulled', schema: changeEnvelope(pullResultSchema) }, ...errors },
      handle: async ({ principal, params }) => {
        const result = await repositories.pull(principal.accountId, params.workspaceId);
        return { status: 200, body: { message: result.outcome === 'up_to_date' ? 'already up to date' : `pulled (${result.outcome.replace('_', '-')})`, data: headOf(result) } };
      },
    }),
    route({
      method: 'POST',
      path: `${path}/commit`,
      tag: TAG,
      summary: 'Commit the working copy’s changes (all, or those under paths) on the current branch',
      params: workspaceParams,
      body: { json: commitBody },
      responses: { 200: { description: 'committed', schema: changeEnvelope(commitResultSchema) }, ...errors },
      handle: async ({ principal, params, body }) => {
        const result = await repositories.commit(principal.accountId, params.workspaceId, body);
        return { status: 200, body: { message: `committed ${result.changes.length} change(s)`, data: headOf(result) } };
      },
    }),
    route({
      method: 'POST',
      path: `${path}/push`,
      tag: TAG,
      summary: 'Push the current branch to the connection’s branch on the remote (a fast-forward only: pull first when it has moved)',
      params: workspaceParams,
      responses: { 200: { description: 'pushed', schema: changeEnvelope(gitHeadSchema) }, ...errors },
      handle: async ({ principal, params }) => ({
        status: 200,
        body: { message: 'pushed', data: headOf(await repositories.push(principal.accountId, params.workspaceId)) },
      }),
    }),
    route({
      method: 'GET',
      path: `${path}/status`,
      tag: TAG,
      summary: 'The working copy’s branch, commit and changed files',
      params: workspaceParams,
      responses: { 200: { description: 'the status', schema: dataEnvelope(repositoryStatusSchema) }, 404: errors[404], 409: errors[409], 501: errors[501] },
      handle: async ({ principal, params }) => ({ status: 200, body: { data: await repositories.status(principal.accountId, params.workspaceId) } }),
    }),
  ];
}

/** A result's head fields as answered: null, not absent, for a detached head or a repository without commits. */
function headOf<T extends { branch?: string; commit?: string }>(result: T): Omit<T, 'branch' | 'commit'> & { branch: string | null; commit: string | null } {
  return { ...result, branch: result.branch ?? null, commit: result.commit ?? null };
}
