import { Document, isMap, LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import { DomainError, type ErrorDetail } from '../errors';
import { MAX_JSON_DEPTH, TOO_DEEP_MESSAGE, withinDepthLimit } from '../input/json-depth';
import { locateYamlPath, yamlDepthOver } from '../input/yaml-document';
import { PROVIDER_NAMES } from '../../ports/provider-names';

/**
 * A workspace's configuration (docs/api.md#workspace-config): the YAML file below, read and changed
 * as a `yaml` Document so a PATCH keeps the file's comments and key order. Pure: the service reads
 * and writes the file.
 */

/** Where the configuration lives, relative to the workspace root. */
export const WORKSPACE_CONFIG_PATH = '.runloom/workspace-config.runloom.yaml';

/** Largest configuration file read or written: a configuration, not a data store. */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/** A model as threads, prompt commands and prompt tasks name it (docs/api.md#workspace-config). */
export const modelChoiceSchema = z
  .object({
    provider: z.enum(PROVIDER_NAMES).describe('one of the seven provider names'),
    model: z.string().min(1, 'model must not be empty').describe("the vendor's model name"),
  })
  .meta({ id: 'ModelChoice', examples: [{ provider: 'openai', model: 'gpt-4o' }] });

/** The keys Runloom reads; any other key is kept as written (features and clients add their own). */
export const workspaceConfigSchema = z
  .looseObject({
    models: z
      .looseObject({ default: modelChoiceSchema.optional().describe('the model used when a request and its command or task name none') })
      .optional(),
  })
  .meta({ id: 'WorkspaceConfig', examples: [{ models: { default: { provider: 'anthropic', model: 'claude-sonnet-4-5' } } }] });

export type WorkspaceConfig = z.infer<typeof workspaceConfigSchema>;

/** A configuration file read: its Document (to edit in place) and its value. */
export interface ConfigDocument {
  document: Document;
  config: WorkspaceConfig;
}

/**
 * Reads the file's text. Refuses (400, each problem located by line and column in `details`) text
 * that is not YAML, nests past the depth limit, is not a mapping or breaks the configuration schema.
 * Empty text is the empty configuration.
 */
export function readConfigDocument(text: string): ConfigDocument {
  const lineCounter = new LineCounter();
  let document: Document;
  try {
    document = parseDocument(text, { lineCounter, prettyErrors: false });
  } catch (error) {
    throw brokenFile([{ path: '', message: `the file cannot be read as YAML: ${(error as Error).message}` }]);
  }
  const syntax = document.errors.find((error) => error.message.includes('call stack')) ?? document.errors[0];
  if (syntax) {
    const { line, col } = lineCounter.linePos(syntax.pos[0]);
    const message = syntax.message.includes('call stack') ? TOO_DEEP_MESSAGE : syntax.message;
    throw brokenFile([{ path: '', message, line, column: col }]);
  }
  if (yamlDepthOver(document.contents, MAX_JSON_DEPTH)) throw brokenFile([{ path: '', message: TOO_DEEP_MESSAGE, line: 1, column: 1 }]);
  if (document.contents !== null && !isMap(document.contents)) {
    throw brokenFile([{ path: '', message: 'the configuration must be a mapping of keys (such as `models:`)', ...locateYamlPath(document, lineCounter, []) }]);
  }
  let value: unknown;
  try {
    value = document.toJS() ?? {};
  } catch (error) {
    // Alias bombs and the like are bad input too, not a crash.
    throw brokenFile([{ path: '', message: `the file cannot be read as YAML: ${(error as Error).message}` }]);
  }
  if (!withinDepthLimit(value)) throw brokenFile([{ path: '', message: TOO_DEEP_MESSAGE, line: 1, column: 1 }]);
  const parsed = workspaceConfigSchema.safeParse(value);
  if (!parsed.success) {
    throw brokenFile(parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message, ...locateYamlPath(document, lineCounter, issue.path as (string | number)[]) })));
  }
  return { document, config: parsed.data };
}

/** The empty configuration, for a workspace without the file. */
export function emptyConfigDocument(): ConfigDocument {
  return { document: new Document({}), config: {} };
}

/**
 * Applies a JSON merge patch to the Document in place: objects merge key by key, anything else
 * (arrays included) replaces, `null` deletes. Untouched nodes keep their comments and order; new
 * keys go last.
 */
export function mergeIntoDocument(document: Document, patch: Record<string, unknown>, path: (string | number)[] = []): void {
  for (const [key, value] of Object.entries(patch)) {
    const at = [...path, key];
    if (value === null) {
      document.deleteIn(at);
    } else if (isPlainObject(value) && isMap(document.getIn(at, true))) {
      mergeIntoDocument(document, value, at);
    } else {
      document.setIn(at, document.createNode(value));
    }
  }
}

/**
 * The edited Document's value checked against the schema: 400 naming each field of the merged
 * configuration that is wrong (`models.default.provider`, …). Nothing is written before this passes.
 */
export function checkMergedConfig(document: Document): WorkspaceConfig {
  const parsed = workspaceConfigSchema.safeParse(document.toJS() ?? {});
  if (parsed.success) return parsed.data;
  const details = parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }));
  const first = details[0]!;
  throw DomainError.invalid(`the patched configuration is invalid: ${first.path ? `${first.path}: ` : ''}${first.message}`, details);
}

function brokenFile(details: ErrorDetail[]): DomainError {
  const first = details[0]!;
  const where = first.line === undefined ? '' : ` at line ${first.line}, column ${first.column}`;
  return DomainError.invalid(
    `${WORKSPACE_CONFIG_PATH} is invalid${where}: ${first.path ? `${first.path}: ` : ''}${first.message}; fix the file (upload a corrected one) and retry`,
    details.map((detail) => ({ ...detail, path: detail.path || WORKSPACE_CONFIG_PATH })),
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
