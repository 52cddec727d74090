import { ApiError } from './api-error';

/**
 * One HTTP request as the router reads it. `webExchange` wraps a web `Request`; a server adapter
 * implements it over its own request object, so that a JSON exchange never builds undici's
 * `Request`, `Headers`, `AbortSignal` and body streams: those cost more CPU than everything else a
 * small request does (bench/http.bench.ts).
 */
export interface Exchange {
  readonly method: string;
  /** The absolute URL. */
  readonly url: string;
  /** Whether a body follows (a web Request's `body !== null`). */
  readonly hasBody: boolean;
  /** A header by lower-case name, repeated ones joined by ', ' as `Headers.get` does; null when absent. */
  header(name: string): string | null;
  /**
   * The whole body as UTF-8 text (without a BOM), read at most once: PAYLOAD_TOO_LARGE past
   * `limit` bytes without buffering more than that, BAD_REQUEST when the client cut it off or it
   * is not valid UTF-8 (`decodeUtf8Body`).
   */
  readText(limit: number): Promise<string>;
  /**
   * The body as a web stream (null without one), without building the web `Request`: what a
   * route whose body is `{ stream }` reads. The web `Request`, if built later, carries the same stream.
   */
  body(): ReadableStream<Uint8Array> | null;
  /** The web `Request`, built on first call. */
  request(): Request;
  /**
   * Aborts when the client goes away before its answer is complete (the web Request's `signal`),
   * without building the web `Request` for it.
   */
  signal(): AbortSignal;
  /** The peer's IP address (see `ConnectionInfo`); undefined when the caller did not say. */
  readonly remoteAddress: string | undefined;
}

/**
 * What the connection tells about a request beyond its headers, given by whoever accepted it (a
 * server adapter, or a host calling `Runloom.handle`).
 */
export interface ConnectionInfo {
  /**
   * The peer's IP address as the socket sees it: behind a reverse proxy, the proxy's, unless the
   * adapter was told to trust that proxy's `X-Forwarded-For`. Never taken from a header by default,
   * since any client can send one. Limits keyed by address (the token endpoint's) read it.
   */
  remoteAddress?: string;
}

/** The exchange of a web `Request` (`Runloom.handle`). */
export function webExchange(request: Request, connection: ConnectionInfo = {}): Exchange {
  return {
    remoteAddress: connection.remoteAddress,
    method: request.method,
    url: request.url,
    hasBody: request.body !== null,
    header: (name) => request.headers.get(name),
    readText: (limit) => readText(request, limit),
    body: () => request.body,
    request: () => request,
    signal: () => request.signal,
  };
}

/** Reads a web request's body as text, refusing (413) past `limit` bytes without buffering more than that. */
export async function readText(request: Request, limit: number): Promise<string> {
  refuseDeclaredTooLarge(request.headers.get('content-length'), limit);
  if (!request.body) return '';
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await readFromClient(reader);
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel();
      throw bodyTooLarge(limit);
    }
    chunks.push(value);
  }
  const joined = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    joined.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return decodeUtf8Body(joined);
}

/** Fatal: a malformed byte is an error, never silently replaced by U+FFFD. A leading BOM is dropped. */
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A request body as text: 400 when its bytes are not valid UTF-8, since a body silently "repaired"
 * stores something other than what the client sent.
 */
export function decodeUtf8Body(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw ApiError.badRequest(`the body is not valid UTF-8 (byte ${firstInvalidUtf8(bytes)}); send it encoded as UTF-8`);
  }
}

/** Offset of the first byte that starts no valid UTF-8 sequence (as the WHATWG decoder sees it). */
function firstInvalidUtf8(bytes: Uint8Array): number {
  let index = 0;
  while (index < bytes.length) {
    const lead = bytes[index]!;
    const length = lead < 0x80 ? 1 : lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
    if (length === 0 || index + length > bytes.length) return index;
    try {
      utf8.decode(bytes.subarray(index, index + length));
    } catch {
      return index;
    }
    index += length;
  }
  return index;
}

/** 413 up front when the declared Content-Length is over `limit`. */
export function refuseDeclaredTooLarge(contentLength: string | null, limit: number): void {
  const declared = Number(contentLength);
  if (Number.isFinite(declared) && declared > limit) throw bodyTooLarge(limit);
}

export function bodyTooLarge(limit: number): ApiError {
  return new ApiError('PAYLOAD_TOO_LARGE', `the body is over the limit of ${limit} bytes`);
}

/**
 * A body the client's side broke (the connection closed halfway, a broken chunked encoding): bad
 * input, so 400 rather than an internal error.
 */
export function bodyCutOff(error: unknown): ApiError {
  return ApiError.badRequest(`the body was cut off before its end (${error instanceof Error ? error.message : String(error)}); send it again`);
}

async function readFromClient(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<ReadableStreamReadResult<Uint8Array>> {
  try {
    return await reader.read();
  } catch (error) {
    throw bodyCutOff(error);
  }
}
