import * as z from 'zod';

/**
 * The one check that names and paths given by clients pass before anything stores or opens them
 * (resource names and `directory_path` today; workspace file paths reuse it). A safe path is
 * `/`-separated, and none of its segments can climb out of where it is resolved (`..`), alias
 * another (`.`, empty segments), or mean something else to another file system, log or header
 * (`\`, NUL and other control characters). ARCHITECTURE.md (domain/paths) says who uses it.
 */

/** Longest segment (a file or directory name), in characters: what common file systems allow. */
export const MAX_SEGMENT_LENGTH = 255;
/** Longest whole path, in characters. */
export const MAX_PATH_LENGTH = 4096;

export interface SafePathRules {
  /** Field name used in messages, e.g. `directory_path`. */
  field: string;
  /**
   * `segment`: one name, no `/` (a resource name, a file name). `relative`: segments joined by `/`,
   * never starting with `/` (workspace paths). `rooted`: like `relative`, but a leading `/` (and
   * the root `/` alone) is allowed (resource directories).
   */
  kind: 'segment' | 'relative' | 'rooted';
  /** Whether the empty string is a valid value (it is not by default). */
  allowEmpty?: boolean;
  /** Overrides MAX_PATH_LENGTH (a segment is also bounded by MAX_SEGMENT_LENGTH). */
  maxLength?: number;
}

/**
 * What is wrong with `value` under `rules`, as a message that says what to fix, or undefined when
 * it is safe. Pure and linear in the length of `value`.
 */
export function pathProblem(value: string, rules: SafePathRules): string | undefined {
  const { field, kind } = rules;
  if (value.length === 0) return rules.allowEmpty ? undefined : `${field} must not be empty`;
  const maxLength = kind === 'segment' ? Math.min(MAX_SEGMENT_LENGTH, rules.maxLength ?? MAX_SEGMENT_LENGTH) : (rules.maxLength ?? MAX_PATH_LENGTH);
  if (value.length > maxLength) return `${field} must be at most ${maxLength} characters (got ${value.length})`;
  for (let index = 0; index < value.length; index += 1) {
    const code = value.charCodeAt(index);
    if (code === 0) return `${field} must not contain NUL characters`;
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) {
      return `${field} must not contain control characters (found U+${code.toString(16).toUpperCase().padStart(4, '0')} at position ${index})`;
    }
    if (code === 0x5c) return `${field} must not contain '\\': separate ${kind === 'segment' ? 'directories in directory_path' : 'segments'} with '/'`;
  }
  if (kind === 'segment') {
    if (value.includes('/')) return `${field} must be a single name without '/': put the directories in directory_path`;
    return segmentProblem(field, value);
  }
  if (value.startsWith('/') && kind === 'relative') return `${field} must be relative: remove the leading '/'`;
  if (value === '/') return undefined;
  const body = value.replace(/^\//, '').replace(/\/$/, '');
  for (const segment of body.split('/')) {
    const problem = segmentProblem(field, segment);
    if (problem) return problem;
  }
  return undefined;
}

function segmentProblem(field: string, segment: string): string | undefined {
  if (segment === '') return `${field} must not contain empty segments ('//'): remove the doubled '/'`;
  if (segment === '..') return `${field} must not contain '..' segments: give the path without climbing up`;
  if (segment === '.') return `${field} must not contain '.' segments: remove them`;
  if (segment.length > MAX_SEGMENT_LENGTH) return `${field} has a segment over ${MAX_SEGMENT_LENGTH} characters: shorten it`;
  return undefined;
}

/** Whether `value` is safe under `rules` (`pathProblem` finds nothing). */
export function isSafePath(value: string, rules: SafePathRules): boolean {
  return pathProblem(value, rules) === undefined;
}

/** A zod string that must pass `pathProblem` under `rules`; the issue's message says what to fix. */
export function safePathSchema(rules: SafePathRules): z.ZodString {
  return z.string().check((context) => {
    const problem = pathProblem(context.value, rules);
    if (problem) context.issues.push({ code: 'custom', message: problem, input: context.value });
  });
}
