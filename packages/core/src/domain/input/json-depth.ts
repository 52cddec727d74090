import { DomainError } from '../errors';

/**
 * The one depth limit of structured input: JSON bodies, JSON carried in form fields or query
 * parameters (resource `metadata`, `tags`) and YAML configurations. Deeper values parse, but
 * overflow the stack where they are walked or serialized again (storage, replies, comparisons).
 * Their size is bounded by the JSON body limit (`jsonBodyLimitBytes`), which also bounds form
 * fields; see ARCHITECTURE.md (domain/input/).
 */
export const MAX_JSON_DEPTH = 64;

/** What every refusal of too-deep input says, whatever kind of input it was. */
export const TOO_DEEP_MESSAGE = `structured input (JSON, YAML, form metadata) may be nested at most ${MAX_JSON_DEPTH} levels deep: flatten it`;

/** Nesting depth of a JSON value (a scalar is 0), walked without recursion; stops counting past the limit. */
export function jsonDepth(value: unknown): number {
  let deepest = 0;
  const pending: [unknown, number][] = [[value, 0]];
  while (pending.length > 0) {
    const [current, depth] = pending.pop()!;
    if (current === null || typeof current !== 'object') continue;
    deepest = Math.max(deepest, depth + 1);
    if (deepest > MAX_JSON_DEPTH + 1) return deepest;
    for (const child of Object.values(current)) pending.push([child, depth + 1]);
  }
  return deepest;
}

/** Whether `value` is within the depth limit. */
export function withinDepthLimit(value: unknown): boolean {
  return jsonDepth(value) <= MAX_JSON_DEPTH;
}

/**
 * Refuses (400) a value nested past MAX_JSON_DEPTH. `where` is the input kind for the message
 * (`body`, `config`); `path` the field that held the value, if any. For an object, the message
 * names its first top-level field that is too deep.
 */
export function refuseTooDeep(value: unknown, where: 'body' | 'query' | 'config', path = ''): void {
  if (withinDepthLimit(value)) return;
  const field =
    value !== null && typeof value === 'object' ? Object.entries(value).find(([, child]) => jsonDepth(child) >= MAX_JSON_DEPTH)?.[0] : undefined;
  const full = [path, field].filter((part) => part !== undefined && part !== '').join('.');
  throw DomainError.invalid(`invalid ${where}: ${full ? `${full}: ` : ''}${TOO_DEEP_MESSAGE}`, [{ path: full, message: TOO_DEEP_MESSAGE }]);
}
