/**
 * How stored content is handed to a browser. Content of a type a browser only displays (plain
 * text, images, audio, video, PDF, JSON) is served `inline`; anything else — HTML, SVG, XML,
 * JavaScript, and every type not known to be passive — is served as an `attachment` under
 * `Content-Security-Policy: sandbox`, so an uploaded page never runs in the server's origin.
 * `X-Content-Type-Options: nosniff` (set by the router on every answer) keeps browsers from
 * reading passive types as something else.
 */

const PASSIVE_TYPES = new Set([
  'text/plain',
  'text/csv',
  'text/tab-separated-values',
  'text/markdown',
  'application/json',
  'application/pdf',
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'image/bmp',
]);
const PASSIVE_FAMILIES = ['audio/', 'video/'];

/** The media type without parameters, lower-case: `Text/HTML; charset=x` → `text/html`. */
export function mediaTypeEssence(mimeType: string): string {
  return mimeType.split(';')[0]!.trim().toLowerCase();
}

/** Whether a browser only displays content of this type (never runs script in it). */
export function isPassiveMediaType(mimeType: string): boolean {
  const essence = mediaTypeEssence(mimeType);
  return PASSIVE_TYPES.has(essence) || PASSIVE_FAMILIES.some((family) => essence.startsWith(family) && !essence.includes('xml'));
}

/** Headers that say how to present content named `name` of type `mimeType`. */
export function presentationHeaders(name: string, mimeType: string): Record<string, string> {
  if (isPassiveMediaType(mimeType)) return { 'content-disposition': contentDisposition('inline', name) };
  return { 'content-disposition': contentDisposition('attachment', name), 'content-security-policy': 'sandbox' };
}

/** The disposition with the name, ASCII-safe, and exact in RFC 5987 form for any other characters. */
function contentDisposition(kind: 'inline' | 'attachment', name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
