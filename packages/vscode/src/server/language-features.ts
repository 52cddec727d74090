import type { z } from 'zod';
import { descriptionAt, keysAt, valuesAt } from './schema-outline';
import { yamlContextAt, yamlKeyPathAt, type YamlSegment } from './yaml-context';

/**
 * Diagnostics, completion and hover for Runloom's own files, independent of the LSP library so
 * they are tested without an editor. Each kind of file names the zod schema and the diagnosis the
 * server applies to it over HTTP, so the editor shows the very messages a 400 would carry.
 */

/** A problem, as the server's validation reports it (1-based position when known). */
export interface FileDiagnostic {
  path: string;
  message: string;
  severity: 'error' | 'warning';
  line?: number;
  column?: number;
}

export interface RunloomFileKind {
  /** Shown in hovers and in the diagnostics' source. */
  label: string;
  /** Whether a document (by its path, `/`-separated) is of this kind. */
  matches(path: string): boolean;
  schema: z.ZodType;
  diagnose(text: string): FileDiagnostic[];
}

/** 0-based, end exclusive: the shape of LSP ranges. */
export interface TextRange {
  start: { line: number; character: number };
  end: { line: number; character: number };
}

export interface EditorDiagnostic {
  range: TextRange;
  message: string;
  severity: 'error' | 'warning';
  source: string;
}

export interface EditorCompletion {
  label: string;
  kind: 'property' | 'value';
  /** What is inserted (`key: ` for properties). */
  insertText: string;
  documentation: string | undefined;
  /** Required keys sort first. */
  sortText: string;
}

export function kindOf(kinds: readonly RunloomFileKind[], path: string): RunloomFileKind | undefined {
  return kinds.find((kind) => kind.matches(path));
}

/**
 * The kind's diagnostics placed in the text: a located problem spans from its position to the end
 * of that line's token; one without a position marks the first line.
 */
export function diagnosticsOf(kind: RunloomFileKind, text: string): EditorDiagnostic[] {
  const lines = text.split(/\r?\n/);
  return kind.diagnose(text).map((diagnostic) => {
    const line = Math.max(0, Math.min((diagnostic.line ?? 1) - 1, lines.length - 1));
    const lineText = lines[line] ?? '';
    const start = diagnostic.column === undefined ? lineText.length - lineText.trimStart().length : Math.max(0, diagnostic.column - 1);
    const end = Math.max(start + 1, lineText.trimEnd().length);
    const where = diagnostic.path ? `${diagnostic.path}: ` : '';
    return {
      range: { start: { line, character: start }, end: { line, character: end } },
      message: `${where}${diagnostic.message}`,
      severity: diagnostic.severity,
      source: `Runloom (${kind.label})`,
    };
  });
}

/** Keys of the mapping under the cursor, or the values of the field whose value is being typed. */
export function completionsAt(kind: RunloomFileKind, text: string, line: number, character: number): EditorCompletion[] {
  const context = yamlContextAt(text, line, character);
  if (!context) return [];
  if (context.kind === 'value') {
    return valuesAt(kind.schema, context.path)
      .filter((value) => value.startsWith(context.prefix))
      .map((value, index) => ({
        label: value,
        kind: 'value',
        insertText: value,
        documentation: descriptionAt(kind.schema, context.path),
        sortText: String(index).padStart(4, '0'),
      }));
  }
  const present = siblingKeys(text, line);
  return keysAt(kind.schema, context.path)
    .filter((key) => key.name.startsWith(context.prefix) && !present.has(key.name))
    .map((key) => ({
      label: key.name,
      kind: 'property',
      insertText: `${key.name}: `,
      documentation: key.description,
      sortText: `${key.required ? 0 : 1}${key.name}`,
    }));
}

/** Markdown for the key under the cursor: its path, documentation and accepted values. */
export function hoverAt(kind: RunloomFileKind, text: string, line: number, character: number): string | undefined {
  const path = yamlKeyPathAt(text, line, character);
  if (!path) return undefined;
  const description = descriptionAt(kind.schema, path);
  const values = valuesAt(kind.schema, path);
  const keys = keysAt(kind.schema, path);
  if (!description && values.length === 0 && keys.length === 0) return undefined;
  const parts = [`**${displayPath(path)}** (${kind.label})`];
  if (description) parts.push(description);
  if (values.length > 0) parts.push(`One of: ${values.map((value) => `\`${value}\``).join(', ')}`);
  if (keys.length > 0) parts.push(`Keys: ${keys.map((key) => `\`${key.name}\`${key.required ? ' (required)' : ''}`).join(', ')}`);
  return parts.join('\n\n');
}

function displayPath(path: readonly YamlSegment[]): string {
  return path.map((segment) => (typeof segment === 'number' ? '[]' : segment)).join('.').replace(/\.\[\]/g, '[]');
}

/** Keys already written in the cursor line's mapping (same column, same block), so completion skips them. */
function siblingKeys(text: string, line: number): Set<string> {
  const lines = text.split(/\r?\n/);
  const column = /^(\s*)(-\s+)?/.exec(lines[line] ?? '')![0].length;
  const startsElement = /^\s*-\s/.test(lines[line] ?? '');
  const keys = new Set<string>();
  const collect = (step: 1 | -1): void => {
    for (let index = line + step; index >= 0 && index < lines.length; index += step) {
      const text = lines[index]!;
      if (text.trim() === '' || text.trimStart().startsWith('#')) continue;
      const [, indent = '', dash, key] = /^(\s*)(-\s+)?(?:([^\s:#][^:#]*?):(?:\s|$))?/.exec(text)!;
      const contentColumn = indent.length + (dash?.length ?? 0);
      // A `- ` marker left of the column starts a sequence element: the next one going down.
      const elementStart = dash !== undefined && indent.length < column;
      if (contentColumn < column || (elementStart && step === 1)) return;
      if (contentColumn === column && key !== undefined) keys.add(key.trim());
      // Going up, it is the first line of the cursor's own element.
      if (elementStart) return;
    }
  };
  if (!startsElement) collect(-1);
  collect(1);
  return keys;
}
