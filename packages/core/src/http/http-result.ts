/** What a route handler returns: a ready `Response`, or a status with a JSON body. */
export type HttpResult = Response | JsonResult;

export interface JsonResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** The JSON text of each response `jsonResponse` built (see `jsonBodyText`). */
const jsonTexts = new WeakMap<Response, string>();

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  if (body === undefined) return new Response(null, { status, headers });
  const text = JSON.stringify(body);
  const response = new Response(text, { status, headers: { 'content-type': JSON_CONTENT_TYPE, ...headers } });
  jsonTexts.set(response, text);
  return response;
}

/**
 * The body of a response that `jsonResponse` built, as the text it was made from. A server
 * adapter writes it directly: reading it back through the body stream costs more than the rest
 * of a small request's translation.
 */
export function jsonBodyText(response: Response): string | undefined {
  return jsonTexts.get(response);
}

export function toResponse(result: HttpResult): Response {
  return result instanceof Response ? result : jsonResponse(result.status, result.body, result.headers);
}
