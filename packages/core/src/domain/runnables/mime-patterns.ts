/**
 * MIME type patterns of placeholders (docs/api.md#configurations): `type/subtype` where `*` is a wildcard, e.g.
 * `text/plain`, `image/*`, `application/*+json`, `*\/*`. Parameters (`; charset=…`) are not part
 * of a pattern.
 */
const MIME_PATTERN = /^(\*|[a-z0-9][a-z0-9!#$&^_.+-]*)\/([a-z0-9!#$&^_.+*-]+)$/i;

export function isMimePattern(pattern: string): boolean {
  const match = MIME_PATTERN.exec(pattern);
  // A wildcard type with a concrete subtype (`*\/json`) names nothing sensible.
  return match !== null && (match[1] !== '*' || match[2] === '*');
}

/** Whether a concrete MIME type (parameters ignored) matches a pattern, case-insensitively. */
export function mimeTypeMatches(pattern: string, mimeType: string): boolean {
  const essence = mimeType.split(';')[0]!.trim().toLowerCase();
  const source = pattern
    .toLowerCase()
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^/]*');
  return new RegExp(`^${source}$`).test(essence);
}
