/**
 * Deeper JSON than this is refused: it parses, but overflows the stack where it is serialized
 * again (storage, replies).
 */
export const MAX_JSON_DEPTH = 64;

/** Nesting depth of a JSON value (a scalar is 0), walked without recursion. */
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
