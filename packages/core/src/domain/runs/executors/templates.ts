import type { FilePart, TextPart } from '../../../ports/model-gateway';
import { SOLE_TEMPLATE_REFERENCE, TEMPLATE_REFERENCE } from '../../runnables/template-syntax';

/**
 * `{{reference}}` templates of runnable configurations (the syntax is `runnables/template-syntax.ts`,
 * docs/api.md#configurations). A reference is a dot path into the scope: `document`,
 * `customer.name`, `steps.summarize.output`, `items.0`. References the scope cannot resolve stay in
 * the text as written (the braces may be meant literally).
 */

/** A file or image value: embedded into prompts as a content part of its MIME type. */
export class FileValue {
  constructor(
    readonly mediaType: string,
    readonly data: Uint8Array,
    readonly filename?: string,
  ) {}

  toPart(): FilePart {
    return { type: 'file', mediaType: this.mediaType, data: this.data, ...(this.filename ? { filename: this.filename } : {}) };
  }
}

/** Values a template can reach: text, JSON values and files, by name. */
export type Scope = Readonly<Record<string, unknown>>;


/** The value at a dot path, or undefined when any segment is missing. */
export function resolveReference(scope: Scope, reference: string): unknown {
  let value: unknown = scope;
  for (const segment of reference.split('.')) {
    if (value === null || typeof value !== 'object' || value instanceof FileValue) return undefined;
    if (!Object.hasOwn(value, segment)) return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return value;
}

/** How a value reads inside text: strings as they are, files by name, everything else as JSON. */
export function valueAsText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof FileValue) return `[file ${value.filename ?? value.mediaType}]`;
  return JSON.stringify(value) ?? '';
}

/** The template with every resolvable reference replaced by its text. */
export function renderText(template: string, scope: Scope): string {
  return template.replace(TEMPLATE_REFERENCE, (whole, reference: string) => {
    const value = resolveReference(scope, reference);
    return value === undefined ? whole : valueAsText(value);
  });
}

/**
 * The template as message content: text parts, with each file reference becoming a file part of
 * its MIME type at its place in the text.
 */
export function renderParts(template: string, scope: Scope): (TextPart | FilePart)[] {
  const parts: (TextPart | FilePart)[] = [];
  let text = '';
  let last = 0;
  for (const match of template.matchAll(TEMPLATE_REFERENCE)) {
    const value = resolveReference(scope, match[1]!);
    text += template.slice(last, match.index);
    last = match.index + match[0].length;
    if (value instanceof FileValue) {
      if (text !== '') parts.push({ type: 'text', text });
      text = '';
      parts.push(value.toPart());
    } else {
      text += value === undefined ? match[0] : valueAsText(value);
    }
  }
  text += template.slice(last);
  if (text !== '') parts.push({ type: 'text', text });
  return parts;
}

/** The files a template references, in order. */
export function referencedFiles(template: string, scope: Scope): FileValue[] {
  return [...template.matchAll(TEMPLATE_REFERENCE)].map((match) => resolveReference(scope, match[1]!)).filter((value) => value instanceof FileValue);
}

/**
 * A template as a value: exactly one `{{reference}}` passes the referenced value through unchanged
 * (an object stays an object); anything else renders as text.
 */
export function renderValue(template: string, scope: Scope): unknown {
  const sole = SOLE_TEMPLATE_REFERENCE.exec(template);
  if (sole) {
    const value = resolveReference(scope, sole[1]!);
    if (value !== undefined) return value;
  }
  return renderText(template, scope);
}

/** Renders every string of a JSON-like value (flow step `with` blocks). */
export function renderDeep(value: unknown, scope: Scope): unknown {
  if (typeof value === 'string') return renderValue(value, scope);
  if (Array.isArray(value)) return value.map((item) => renderDeep(item, scope));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, renderDeep(item, scope)]));
  }
  return value;
}
