/** What a route handler returns: a ready `Response`, or a status with a JSON body. */
export type HttpResult = Response | JsonResult;

export interface JsonResult {
  status: number;
  body?: unknown;
  /**
   * The body already serialised, instead of `body`: for handlers that keep the JSON of what they
   * answer again and again (it must be what `JSON.stringify` of the body would give).
   */
  jsonText?: string;
  /** Lower-case names. */
  headers?: Record<string, string>;
}

/**
 * A JSON answer serialised once: what the router gives a server adapter to write as it is, with
 * no web `Response` in between. `text` null: no body. The adapter owns `headers` (lower-case names).
 */
export interface SerializedJson {
  status: number;
  headers: Record<string, string>;
  text: string | null;
}

/** What `Router.dispatch` answers: a handler's own `Response` (streams, files) or serialised JSON. */
export type Answer = Response | SerializedJson;

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** The JSON text of each response `jsonResponse` built (see `jsonBodyText`). */
const jsonTexts = new WeakMap<Response, string>();

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return toResponse(serializeJson({ status, body, headers }));
}

/**
 * A response whose body is `text` held in memory (Prometheus text, a cached document). Like
 * `jsonResponse`, the router and server adapters know its text, so HEAD and node answers carry
 * its Content-Length and it is written without reading it back through the body stream.
 */
export function textResponse(status: number, text: string, headers: Record<string, string>): Response {
  const response = new Response(text, { status, headers });
  jsonTexts.set(response, text);
  return response;
}

/**
 * The body of a response that `jsonResponse` or `textResponse` built, as the text it was made from. A server
 * adapter writes it directly: reading it back through the body stream costs more than the rest
 * of a small request's translation.
 */
export function jsonBodyText(response: Response): string | undefined {
  return jsonTexts.get(response);
}

export function serializeJson(result: JsonResult): SerializedJson {
  const text = result.jsonText ?? (result.body === undefined ? undefined : JSON.stringify(result.body));
  if (text === undefined) return { status: result.status, headers: { ...result.headers }, text: null };
  return { status: result.status, headers: { 'content-type': JSON_CONTENT_TYPE, ...result.headers }, text };
}

export function toAnswer(result: HttpResult): Answer {
  return result instanceof Response ? result : serializeJson(result);
}

/** The web `Response` of an answer, for web-standard callers (`Runloom.handle`). */
export function toResponse(answer: Answer): Response {
  if (answer instanceof Response) return answer;
  const response = new Response(answer.text, { status: answer.status, headers: answer.headers });
  if (answer.text !== null) jsonTexts.set(response, answer.text);
  return response;
}
