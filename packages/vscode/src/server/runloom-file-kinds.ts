import {
  COMMANDS_DIR,
  commandDefinitionSchema,
  DomainError,
  parseProcessSpec,
  parseRunnableConfig,
  processSpecSchema,
  readConfigDocument,
  runnableConfigSchema,
  WORKSPACE_CONFIG_PATH,
  workspaceConfigSchema,
} from '@runloom/core';
import type { FileDiagnostic, RunloomFileKind } from './language-features';
import { diagnoseYaml, type PathProblem } from './yaml-diagnostics';

/** A command file, `.runloom/commands/<trigger>.yaml` (matched as each document changes). */
const COMMAND_FILE = new RegExp(`(^|/)${COMMANDS_DIR.replace('.', '\\.')}/[^/]+\\.yaml$`);

/**
 * The Runloom files the editor understands, each with the schema and the validation the server
 * applies to it: a runnable configuration gets exactly the diagnostics `POST /v1/runnables`
 * answers in `details`, the workspace configuration those of `PATCH /workspace/{id}/config`, a
 * process specification (`*.process.yaml`, the `spec` of `POST …/processes/{id}/runs`) those of
 * creating a run, and a command file (`.runloom/commands/<trigger>.yaml`) those of creating it.
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
  {
    label: 'process specification',
    matches: (path) => /\.process\.ya?ml$/i.test(path),
    schema: processSpecSchema,
    diagnose: (text) => diagnoseYaml(text, processSpecProblems),
  },
  {
    label: 'command',
    matches: (path) => COMMAND_FILE.test(path),
    schema: commandDefinitionSchema,
    diagnose: (text) => diagnoseYaml(text, commandProblems),
  },
];

/** The problems creating a run with this spec would answer, paths relative to the spec. */
function processSpecProblems(value: unknown): PathProblem[] {
  try {
    parseProcessSpec(value);
    return [];
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return (error.details ?? [{ path: '', message: error.message }]).map((detail) => ({ path: detail.path.replace(/^spec\.?/, ''), message: detail.message }));
  }
}

/** The problems of a command file's definition (the trigger is the file's name, so it is not checked here). */
function commandProblems(value: unknown): PathProblem[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [{ path: '', message: 'a command file is a mapping of its fields (type, template, args…)' }];
  const parsed = commandDefinitionSchema.safeParse({ ...value, trigger: 'file-name' });
  return parsed.success ? [] : parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }));
}

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
