/** What a route handler returns: a ready `Response`, or a status with a JSON body. */
export type HttpResult = Response | JsonResult;

export interface JsonResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(body === undefined ? null : JSON.stringify(body), {
    status,
    headers: body === undefined ? headers : { 'content-type': JSON_CONTENT_TYPE, ...headers },
  });
}

export function toResponse(result: HttpResult): Response {
  return result instanceof Response ? result : jsonResponse(result.status, result.body, result.headers);
}
