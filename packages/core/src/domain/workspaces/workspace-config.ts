import { Document, isCollection, isMap, isNode, isScalar, LineCounter, parseDocument } from 'yaml';
import * as z from 'zod';
import { DomainError, type ErrorDetail } from '../errors';
import { MAX_JSON_DEPTH, TOO_DEEP_MESSAGE, withinDepthLimit } from '../input/json-depth';
import { locateYamlPath, yamlDepthOver } from '../input/yaml-document';
import { PROVIDER_NAMES } from '../../ports/provider-names';
import { lazySchema } from '../lazy-schema';

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
export const modelChoiceSchema = lazySchema(() =>
  z
    .object({
      provider: z.enum(PROVIDER_NAMES).describe('one of the seven provider names'),
      model: z.string().min(1, 'model must not be empty').describe("the vendor's model name"),
    })
    .meta({ id: 'ModelChoice', examples: [{ provider: 'openai', model: 'gpt-4o' }] }),
);

/** The keys Runloom reads; any other key is kept as written (features and clients add their own). */
export const workspaceConfigSchema = lazySchema(() =>
  z
    .looseObject({
      models: z
        .looseObject({ default: modelChoiceSchema.optional().describe('the model used when a request and its command or task name none') })
        .optional(),
    })
    .meta({ id: 'WorkspaceConfig', examples: [{ models: { default: { provider: 'anthropic', model: 'claude-sonnet-4-5' } } }] }),
);

export type WorkspaceConfig = z.infer<typeof workspaceConfigSchema>;

/** A configuration file read: its Document (to edit in place) and its value. */
export interface ConfigDocument {
  document: Document;
  config: WorkspaceConfig;
}

/** A configuration text parsed (not yet checked against the schema), with its positions. */
interface ParsedConfigText {
  document: Document;
  lineCounter: LineCounter;
  value: Record<string, unknown>;
}

/**
 * Reads the file's text and checks it: 400 (each problem located by line and column in `details`)
 * for text that is not YAML, nests past the depth limit, is not a mapping or breaks the
 * configuration schema. Empty text is the empty configuration. What `GET …/config` answers, and
 * what the editor shows for the file.
 */
export function readConfigDocument(text: string): ConfigDocument {
  const { document, lineCounter, value } = parseConfigText(text);
  const parsed = workspaceConfigSchema.safeParse(value);
  if (!parsed.success) {
    throw brokenFile(parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message, ...locateYamlPath(document, lineCounter, issue.path as (string | number)[]) })));
  }
  return { document, config: parsed.data };
}

/**
 * The file's Document to patch: only its syntax is checked (as by `readConfigDocument`), so a
 * PATCH can fix a value the schema refuses; the merged result is checked by `checkMergedConfig`.
 */
export function patchableConfigDocument(text: string): Document {
  return parseConfigText(text).document;
}

/** A Document for a workspace without the file. */
export function emptyConfigDocument(): Document {
  return new Document({});
}

/**
 * Applies a JSON merge patch to the Document in place: objects merge key by key, anything else
 * (arrays included) replaces, `null` deletes. Untouched nodes keep their comments and order, new
 * keys go last; a replaced scalar keeps its comments and quoting, a replaced collection its
 * comments and flow (`[a, b]`) or block style.
 */
export function mergeIntoDocument(document: Document, patch: Record<string, unknown>, path: (string | number)[] = []): void {
  for (const [key, value] of Object.entries(patch)) {
    const at = [...path, key];
    const existing = document.getIn(at, true);
    if (value === null) {
      document.deleteIn(at);
    } else if (isPlainObject(value) && isMap(existing)) {
      mergeIntoDocument(document, value, at);
    } else if (isScalar(existing) && typeof existing.value === typeof value && typeof value !== 'object') {
      existing.value = value;
    } else {
      const replacement = document.createNode(value);
      if (isNode(existing)) {
        replacement.comment = existing.comment;
        replacement.commentBefore = existing.commentBefore;
        if (isCollection(existing) && isCollection(replacement)) replacement.flow = existing.flow;
      }
      document.setIn(at, replacement);
    }
  }
}

/**
 * The edited Document's value checked against the schema: 400 naming each field of the merged
 * configuration that is wrong (`models.default.provider`, …). Nothing is written before this passes.
 */
export function checkMergedConfig(document: Document): WorkspaceConfig {
  let value: unknown;
  try {
    value = document.toJS() ?? {};
  } catch (error) {
    // A patch that deletes the anchor an alias (`*name`) still refers to.
    throw DomainError.invalid(`the patched configuration cannot be written: ${(error as Error).message}; change or delete the aliases that refer to it too`);
  }
  const parsed = workspaceConfigSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const details = parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }));
  const first = details[0]!;
  throw DomainError.invalid(`the patched configuration is invalid: ${first.path ? `${first.path}: ` : ''}${first.message}`, details);
}

/** Parses the text: YAML, within the depth limit, a mapping (or nothing); else 400 located where it can be. */
function parseConfigText(text: string): ParsedConfigText {
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
  // An empty document is the empty configuration: give it a mapping to merge into.
  if (document.contents === null) document.contents = document.createNode({});
  return { document, lineCounter, value: value as Record<string, unknown> };
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
