/**
 * Where the cursor is in a YAML document, read from the lines above it rather than from a parse:
 * a document being typed is usually broken YAML, and completion must still work there.
 */

export type YamlSegment = string | number;

export interface YamlCursorContext {
  /** Path of the mapping the cursor is in (`key`) or of the field whose value it is in (`value`). */
  path: YamlSegment[];
  kind: 'key' | 'value';
  /** What is typed so far of the key or value. */
  prefix: string;
}

const KEY_LINE = /^(\s*)(-\s+)?([^\s#:][^:#]*?):(?:\s+(.*))?$/;
const PARTIAL_KEY = /^(\s*)(-\s+)?([^\s#:'"-][^:#]*)?$/;

/** The context at `character` of 0-based `line`, or undefined inside a comment. */
export function yamlContextAt(text: string, line: number, character: number): YamlCursorContext | undefined {
  const lines = text.split(/\r?\n/);
  const before = (lines[line] ?? '').slice(0, character);
  if (before.includes('#')) return undefined;
  const valueMatch = KEY_LINE.exec(before);
  if (valueMatch && valueMatch[4] !== undefined) {
    const parent = parentPath(lines, line, valueMatch);
    return { path: [...parent, valueMatch[3]!.trim()], kind: 'value', prefix: unquote(valueMatch[4]) };
  }
  const keyMatch = PARTIAL_KEY.exec(before);
  if (!keyMatch) return undefined;
  return { path: parentPath(lines, line, keyMatch), kind: 'key', prefix: keyMatch[3] ?? '' };
}

/** The path of the key under the cursor on a `key: value` line (for hover), or undefined. */
export function yamlKeyPathAt(text: string, line: number, character: number): YamlSegment[] | undefined {
  const lines = text.split(/\r?\n/);
  const match = KEY_LINE.exec(lines[line] ?? '');
  if (!match) return undefined;
  const start = match[1]!.length + (match[2]?.length ?? 0);
  const key = match[3]!.trim();
  if (character < start || character > start + key.length) return undefined;
  return [...parentPath(lines, line, match), key];
}

/** One line's layout: its indent, the `- ` item marker, and the key it opens a block with. */
interface LineShape {
  indent: number;
  /** Column of the line's content: right of a `- ` marker, else the indent. */
  contentColumn: number;
  dash: boolean;
  /** The key when the line is `key:` (or `- key:`) with nothing after it but a comment. */
  opens: string | undefined;
}

function shapeOf(text: string): LineShape | undefined {
  if (/^\s*(#.*)?$/.test(text)) return undefined;
  const indent = text.length - text.trimStart().length;
  const dash = /^(\s*)(-\s+)/.exec(text);
  const contentColumn = dash ? dash[0].length : indent;
  const key = KEY_LINE.exec(text);
  const rest = key?.[4]?.trim() ?? '';
  return { indent, contentColumn, dash: Boolean(dash), opens: key && (rest === '' || rest.startsWith('#')) ? key[3]!.trim() : undefined };
}

/**
 * The path of the mapping holding the key written on `line` (matched by `match`: indent, `- `
 * marker, key). Walking up, a line left of the current column that opens a block (`key:`) is the
 * parent; a `- ` marker makes the mapping right of it an element of a sequence (`0` in the path
 * stands for "an element": schemas treat every element alike).
 */
function parentPath(lines: readonly string[], line: number, match: RegExpExecArray): YamlSegment[] {
  const path: YamlSegment[] = [];
  let column = match[1]!.length;
  if (match[2]) path.unshift(0);
  for (let index = line - 1; index >= 0 && column > 0; index -= 1) {
    const shape = shapeOf(lines[index]!);
    if (!shape || shape.indent >= column) continue;
    if (shape.dash && shape.contentColumn === column) {
      // `- first: …` above us: our mapping is this sequence element.
      path.unshift(0);
      column = shape.indent;
      continue;
    }
    if (shape.contentColumn >= column || shape.opens === undefined) continue;
    path.unshift(shape.opens);
    if (shape.dash) path.unshift(0);
    column = shape.indent;
  }
  return path;
}

function unquote(value: string): string {
  return value.replace(/^['"]/, '');
}
