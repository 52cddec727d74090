import { DomainError, parseRunnableConfig, readConfigDocument, runnableConfigSchema, WORKSPACE_CONFIG_PATH, workspaceConfigSchema } from '@runloom/core';
import type { FileDiagnostic, RunloomFileKind } from './language-features';

/**
 * The Runloom files the editor understands, each with the schema and the validation the server
 * applies to it: a runnable configuration gets exactly the diagnostics `POST /v1/runnables`
 * answers in `details`, the workspace configuration those of `PATCH /workspace/{id}/config`.
 */
export const runloomFileKinds: readonly RunloomFileKind[] = [
  {
    label: 'runnable configuration',
    matches: (path) => /\.runnable\.ya?ml$/i.test(path),
    schema: runnableConfigSchema,
    diagnose: (text) => parseRunnableConfig(text).diagnostics,
  },
  {
    label: 'workspace configuration',
    matches: (path) => path.endsWith(`/${WORKSPACE_CONFIG_PATH}`) || path === WORKSPACE_CONFIG_PATH,
    schema: workspaceConfigSchema,
    diagnose: diagnoseWorkspaceConfig,
  },
];

function diagnoseWorkspaceConfig(text: string): FileDiagnostic[] {
  try {
    readConfigDocument(text);
    return [];
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return (error.details ?? [{ path: '', message: error.message }]).map((detail) => ({
      path: detail.path === WORKSPACE_CONFIG_PATH ? '' : detail.path,
      message: detail.message,
      severity: 'error',
      line: detail.line,
      column: detail.column,
    }));
  }
}
