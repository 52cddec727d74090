import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import {
  type Answer,
  bodyCutOff,
  bodyTooLarge,
  decodeUtf8Body,
  type ConnectionInfo,
  type Exchange,
  jsonBodyText,
  readText,
  refuseDeclaredTooLarge,
  type SerializedJson,
  type SseBody,
  type SseDelivery,
  sseBodyOf,
} from '@runloom/core';

/**
 * The one translation layer between Node's `IncomingMessage`/`ServerResponse` and the web-standard
 * `Request`/`Response` that `runloom.handle` speaks. Every mount (node:http, Express, Fastify) is a
 * few lines over these two functions. Bodies stream in both directions: nothing is buffered except
 * what a response body already holds in memory (see `sendWebResponse`).
 */

export interface ToWebRequestOptions {
  /** The response of the same exchange: when it closes before finishing, the request's signal aborts. */
  response?: ServerResponse;
  /**
   * Behind a reverse proxy you trust: take the scheme and host from `X-Forwarded-Proto` and
   * `X-Forwarded-Host`, and the client's address from the last `X-Forwarded-For` entry (the one
   * your proxy appended). Off by default, since any client can send those headers: the address is
   * then the socket's peer.
   */
  trustProxy?: boolean;
  /**
   * A body some earlier middleware already read (Express body parsers set `req.body`): used
   * instead of the consumed stream.
   */
  parsedBody?: unknown;
  /** The request target to route when a framework rewrote `req.url` (Express strips mount paths). */
  target?: string;
}

/** A Host value: name or IPv4 or [IPv6], optional port. Anything else is not trusted into a URL. */
const HOST = /^(?:[a-z0-9_.-]+|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i;
const METHODS_WITHOUT_BODY = new Set(['GET', 'HEAD']);
/**
 * Headers every answer carries, the router's and the ones this layer writes itself (a request that
 * cannot be read, a failing handler): the content is never sniffed into another type.
 */
const ALWAYS_HEADERS = { 'x-content-type-options': 'nosniff' } as const;

export function toWebRequest(req: IncomingMessage, options: ToWebRequestOptions = {}): Request {
  return webRequest(req, requestUrl(req, options.target ?? req.url, options.trustProxy ?? false), options, 'from-request');
}

/**
 * The web Request of `req` at `url`. Its body is read from `req` (`'from-request'`: a body parser's
 * result when one consumed it), or is the stream already made of it (`null`: read some other way).
 */
function webRequest(
  req: IncomingMessage,
  url: string,
  options: ToWebRequestOptions,
  body: 'from-request' | ReadableStream<Uint8Array> | null,
  clientGone: ClientGoneSignal = new ClientGoneSignal(options.response),
): Request {
  const method = req.method ?? 'GET';
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let index = 0; index < raw.length; index += 2) {
    const name = raw[index]!;
    // HTTP/2 pseudo-headers (:path, :authority) are not headers of the web request.
    if (name.charCodeAt(0) !== 58) headers.append(name, raw[index + 1]!);
  }
  const init: RequestInit & { duplex?: 'half' } = { method, headers };
  if (body instanceof ReadableStream) {
    init.body = body;
    init.duplex = 'half';
  } else if (body === 'from-request' && !METHODS_WITHOUT_BODY.has(method)) {
    if (options.parsedBody !== undefined && (req.readableEnded || !req.readable)) {
      init.body = serializeParsedBody(options.parsedBody, headers);
    } else if (mayHaveBody(req)) {
      init.body = nodeToWebStream(req);
      init.duplex = 'half';
    }
  }
  return new (nodeRequestClass())(url, init, clientGone);
}

/**
 * The exchange of a Node request, read straight from `IncomingMessage`: headers from `rawHeaders`,
 * a JSON body collected from its chunks. The web `Request` is built only when a handler asks.
 */
class NodeExchange implements Exchange {
  readonly method: string;
  readonly url: string;
  readonly hasBody: boolean;
  readonly remoteAddress: string | undefined;
  #request: Request | undefined;
  #clientGone: ClientGoneSignal | undefined;
  #bodyRead = false;
  /** The body as a web stream, once made (`body()`): the web Request carries the same one. */
  #body: ReadableStream<Uint8Array> | null | undefined;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly options: ToWebRequestOptions,
  ) {
    this.method = req.method ?? 'GET';
    this.url = requestUrl(req, options.target ?? req.url, options.trustProxy ?? false);
    this.hasBody = !METHODS_WITHOUT_BODY.has(this.method) && mayHaveBody(req);
    this.remoteAddress = peerAddress(req, options.trustProxy ?? false);
  }

  header(name: string): string | null {
    return rawHeader(this.req, name, true);
  }

  readText(limit: number): Promise<string> {
    if (this.#request) return readText(this.#request, limit);
    refuseDeclaredTooLarge(this.header('content-length'), limit);
    if (!this.hasBody || this.#bodyRead) return Promise.resolve('');
    this.#bodyRead = true;
    return readNodeBody(this.req, limit);
  }

  body(): ReadableStream<Uint8Array> | null {
    if (this.#body === undefined) {
      this.#body = this.hasBody && !this.#bodyRead ? nodeToWebStream(this.req) : null;
      this.#bodyRead = true;
    }
    return this.#body;
  }

  request(): Request {
    this.#request ??= webRequest(this.req, this.url, this.options, this.body(), this.clientGone());
    return this.#request;
  }

  signal(): AbortSignal {
    return this.clientGone().signal;
  }

  private clientGone(): ClientGoneSignal {
    this.#clientGone ??= new ClientGoneSignal(this.res);
    return this.#clientGone;
  }
}

/**
 * The body as UTF-8 text, without a BOM; 400 when it is not valid UTF-8 (`decodeUtf8Body`). Past `limit` bytes the rest
 * is discarded unread, so the 413 still goes out on this connection.
 */
function readNodeBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const detach = (): void => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
    };
    const onData = (chunk: Buffer): void => {
      total += chunk.byteLength;
      if (total <= limit) {
        chunks.push(chunk);
        return;
      }
      detach();
      req.resume();
      reject(bodyTooLarge(limit));
    };
    const onEnd = (): void => {
      detach();
      try {
        resolve(decodeUtf8Body(Buffer.concat(chunks, total)));
      } catch (error) {
        reject(error as Error);
      }
    };
    const onError = (error: Error): void => {
      detach();
      reject(bodyCutOff(error));
    };
    const onClose = (): void => onError(new Error('the client closed the connection before the body was complete'));
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}

/**
 * Writes a web `Response` to a Node response: status, headers (each `Set-Cookie` separately) and
 * the body streamed with backpressure. Resolves when the body is written or the client went away
 * (the web stream is then cancelled, so its producer stops).
 */
export async function sendWebResponse(res: ServerResponse, response: Response): Promise<void> {
  const head = headerObject(response.headers);
  const json = jsonBodyText(response);
  if (json !== undefined) {
    head['content-length'] ??= Buffer.byteLength(json);
    res.writeHead(response.status, head);
    res.end(json);
    return;
  }
  if (response.body === null) {
    res.writeHead(response.status, head);
    res.end();
    return;
  }
  const eventStream = sseBodyOf(response);
  if (eventStream) return sendEventStream(res, response, head, eventStream);
  const reader = response.body.getReader();
  const cancelOnDisconnect = (): void => {
    if (!res.writableFinished) reader.cancel(new Error('the client closed the connection')).catch(() => undefined);
  };
  res.once('close', cancelOnDisconnect);
  try {
    const start = await readAvailable(reader);
    if (start.done) {
      // The whole body was in memory (a JSON answer): one write with a Content-Length.
      head['content-length'] ??= start.size;
      res.writeHead(response.status, head);
      res.end(start.chunks.length === 1 ? start.chunks[0] : Buffer.concat(start.chunks));
      return;
    }
    res.writeHead(response.status, head);
    // Flush the head and the first chunks now: a stream's first event must not wait for the next.
    for (const chunk of start.chunks) await write(res, chunk);
    let pending = start.pending;
    while (!res.destroyed) {
      const { done, value } = await (pending ?? reader.read());
      pending = undefined;
      if (done) break;
      await write(res, value);
    }
    res.end();
  } catch (error) {
    if (res.headersSent) {
      // The status is gone: cutting the connection is the only way to tell the client it is truncated.
      res.destroy(error as Error);
    } else {
      const body = JSON.stringify({ error: 'internal error', code: 'INTERNAL' });
      res.writeHead(500, { ...ALWAYS_HEADERS, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    }
  } finally {
    res.off('close', cancelOnDisconnect);
  }
}

/**
 * Writes an event stream's frames to `res` as the stream sends them (`SseBody.attach`): the same
 * bytes for every client of an event, no web stream read per frame. Frames sent together (a batch
 * of events) leave in one socket write once the code sending them returns: before the answers to
 * the writes that caused them, which Node would otherwise send first and the frames a tick later.
 * When the socket's buffer is full, frames wait in the stream (which drops a client too far
 * behind) until it drains. Resolves once the answer is complete or the client went away.
 *
 * The head and the first frames go out once the event loop has done the rest of this turn's work
 * (`setImmediate`): requests the handler started leave first (a thread reply's vendor call, which
 * Node writes only after all pending promise work, so writing this answer would otherwise delay
 * it, and with it the reply's first delta), and nothing a client is waiting for comes after them.
 */
function sendEventStream(res: ServerResponse, response: Response, head: OutgoingHttpHeaders, body: SseBody): Promise<void> {
  let corked = false;
  /** Frames written in one run of code go out in one write as soon as it ends, not a tick later. */
  const write = (bytes: Uint8Array): boolean => {
    if (!corked) {
      corked = true;
      res.cork();
      queueMicrotask(() => {
        corked = false;
        res.uncork();
      });
    }
    return res.write(bytes);
  };
  return new Promise((resolve) => {
    let delivery: SseDelivery | undefined;
    const onDrain = (): void => delivery!.resume();
    const onClose = (): void => {
      res.off('drain', onDrain);
      // Gone before the stream was attached: it is cancelled as a reader would cancel it.
      if (!delivery) response.body!.cancel().catch(() => undefined);
      else if (!res.writableFinished) delivery.cancel();
      resolve();
    };
    setImmediate(() => {
      if (res.destroyed) return onClose();
      res.writeHead(response.status, head);
      delivery = body.attach({
        write,
        end: () => res.end(),
        destroy: (error) => res.destroy(error),
      });
      res.on('drain', onDrain);
      res.once('close', onClose);
    });
  });
}

function requestUrl(req: IncomingMessage, target: string | undefined, trustProxy: boolean): string {
  const path = target?.startsWith('/') ? target : `/${target ?? ''}`;
  let scheme = (req.socket as TLSSocket).encrypted ? 'https' : 'http';
  let host = rawHeader(req, 'host', false) ?? undefined;
  if (trustProxy) {
    const forwardedProto = firstValue(req.headers['x-forwarded-proto'])?.toLowerCase();
    if (forwardedProto === 'http' || forwardedProto === 'https') scheme = forwardedProto;
    host = firstValue(req.headers['x-forwarded-host']) ?? host;
  }
  if (host === undefined || !HOST.test(host)) host = localHost(req);
  return `${scheme}://${host}${path}`;
}

/**
 * The client's IP address: the socket's peer, or with `trustProxy` the last `X-Forwarded-For`
 * entry (what the trusted proxy saw; entries before it are whatever the client wrote).
 */
export function peerAddress(req: IncomingMessage, trustProxy: boolean): string | undefined {
  if (trustProxy) {
    const header = req.headers['x-forwarded-for'];
    const forwarded = (Array.isArray(header) ? header.join(',') : header ?? '').split(',').map((entry) => entry.trim()).filter(Boolean).at(-1);
    if (forwarded !== undefined) return forwarded;
  }
  return req.socket.remoteAddress;
}

function localHost(req: IncomingMessage): string {
  const address = req.socket.localAddress ?? '127.0.0.1';
  const name = address.includes(':') ? `[${address}]` : address;
  return req.socket.localPort ? `${name}:${req.socket.localPort}` : name;
}

/**
 * A request header by lower-case name, read from the raw headers (`req.headers` builds an object of
 * every header on first read): its first value, or with `joined` all of them joined by ", " as web
 * `Headers.get` answers; null without one.
 */
function rawHeader(req: IncomingMessage, name: string, joined: boolean): string | null {
  const raw = req.rawHeaders;
  let value: string | null = null;
  for (let index = 0; index < raw.length; index += 2) {
    const candidate = raw[index]!;
    if (candidate.length !== name.length || candidate.toLowerCase() !== name) continue;
    if (!joined) return raw[index + 1]!;
    value = value === null ? raw[index + 1]! : `${value}, ${raw[index + 1]!}`;
  }
  return value;
}

function firstValue(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  return value?.split(',')[0]?.trim() || undefined;
}

/** HTTP/1.1: a request without Content-Length or Transfer-Encoding has no body. */
function mayHaveBody(req: IncomingMessage): boolean {
  const length = rawHeader(req, 'content-length', false);
  return rawHeader(req, 'transfer-encoding', false) !== null || (length !== null && length !== '0');
}

/**
 * The Node body as a web stream, paced by the reader: the socket is paused while 64 KiB wait
 * unread, so a slow consumer never makes the body pile up in memory.
 */
function nodeToWebStream(req: IncomingMessage): ReadableStream<Uint8Array> {
  let settled = false;
  const detach = (): void => {
    req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
  };
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const onData = (chunk: Buffer): void => {
    controller.enqueue(chunk);
    if ((controller.desiredSize ?? 0) <= 0) req.pause();
  };
  const onEnd = (): void => {
    settled = true;
    detach();
    controller.close();
  };
  const onError = (error: Error): void => {
    settled = true;
    detach();
    controller.error(error);
  };
  const onClose = (): void => {
    if (!settled) onError(new Error('the client closed the connection before the body was complete'));
  };
  return new ReadableStream<Uint8Array>(
    {
      start(streamController) {
        controller = streamController;
        req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
      },
      pull() {
        req.resume();
      },
      cancel() {
        // The route stopped reading (say, a 413): let Node discard the rest so its answer still goes out.
        settled = true;
        detach();
        req.resume();
      },
    },
    { highWaterMark: 64 * 1024, size: (chunk) => chunk.byteLength },
  );
}

/** Re-encodes what a body parser left in `req.body`, so mounting after one still works. */
function serializeParsedBody(body: unknown, headers: Headers): BodyInit {
  headers.delete('content-length');
  headers.delete('content-encoding');
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return new Uint8Array(body.buffer as ArrayBuffer, body.byteOffset, body.byteLength);
  const mediaType = headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (mediaType === 'application/x-www-form-urlencoded' && typeof body === 'object' && body !== null) {
    return new URLSearchParams(body as Record<string, string>).toString();
  }
  return JSON.stringify(body);
}

/**
 * A signal that aborts when the client goes away before its answer is complete. The
 * AbortController is made only when someone reads `signal`: handing undici's Request a signal to
 * follow costs a fifth of a small request's translation, and most routes never look.
 */
class ClientGoneSignal {
  #controller: AbortController | undefined;
  #disconnected = false;

  constructor(response: ServerResponse | undefined) {
    if (response?.closed) {
      // Made lazily (see NodeExchange) after the client had already gone.
      this.#disconnected = !response.writableFinished;
      return;
    }
    response?.once('close', () => {
      if (response.writableFinished) return;
      this.#disconnected = true;
      this.#controller?.abort(clientGone());
    });
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#disconnected) this.#controller.abort(clientGone());
    }
    return this.#controller.signal;
  }
}

type NodeRequestClass = new (url: string, init: RequestInit, clientGone: ClientGoneSignal) => Request;
let definedNodeRequest: NodeRequestClass | undefined;

/**
 * A web Request whose `signal` aborts when the client goes away (`ClientGoneSignal`).
 * Defined on first use: reading the global `Request` loads Node's undici, a tenth of a second of a
 * server's start that JSON exchanges (which build no web Request) never need.
 */
function nodeRequestClass(): NodeRequestClass {
  definedNodeRequest ??= class NodeRequest extends Request {
    readonly #clientGone: ClientGoneSignal;

    constructor(url: string, init: RequestInit, clientGone: ClientGoneSignal) {
      super(url, init);
      this.#clientGone = clientGone;
    }

    override get signal(): AbortSignal {
      return this.#clientGone.signal;
    }
  };
  return definedNodeRequest;
}

function clientGone(): Error {
  return new Error('the client closed the connection');
}

/** Node's header object; `Set-Cookie` as a list so each cookie stays its own header line. */
function headerObject(headers: Headers): OutgoingHttpHeaders {
  const head: OutgoingHttpHeaders = {};
  headers.forEach((value, name) => {
    if (name !== 'set-cookie') head[name] = value;
  });
  const cookies = headers.getSetCookie();
  if (cookies.length) head['set-cookie'] = cookies;
  return head;
}

/** Largest body sent in one write with a Content-Length instead of chunked encoding. */
const IMMEDIATE_BODY_LIMIT = 64 * 1024;

interface AvailableBody {
  chunks: Uint8Array[];
  size: number;
  done: boolean;
  /** The read that was still waiting when the available part ended: the stream goes on from it. */
  pending?: Promise<ReadableStreamReadResult<Uint8Array>>;
}

/**
 * Reads the first chunk, then every further chunk that is already there: an in-memory body
 * (a JSON string) completes within the same tick, a live stream does not and is streamed.
 */
async function readAvailable(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<AvailableBody> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let next = await reader.read();
  for (;;) {
    if (next.done) return { chunks, size, done: true };
    chunks.push(next.value);
    size += next.value.byteLength;
    if (size > IMMEDIATE_BODY_LIMIT) return { chunks, size, done: false };
    const pending = reader.read();
    const settled = await settledThisTick(pending);
    if (settled === undefined) return { chunks, size, done: false, pending };
    next = settled;
  }
}

/** The promise's value if it settles before the current microtask queue drains, else undefined. */
function settledThisTick<T>(promise: Promise<T>): Promise<T | undefined> {
  return new Promise((resolve, reject) => {
    promise.then(resolve, reject);
    // A tick queued from a microtask runs once the microtask queue is empty.
    process.nextTick(resolve, undefined);
  });
}

function write(res: ServerResponse, chunk: Uint8Array): Promise<void> | undefined {
  if (res.write(chunk)) return undefined;
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done).off('close', done);
      resolve();
    };
    res.on('drain', done).on('close', done);
  });
}

/** What a mount needs of Runloom: its web-standard handler, and its native entry when it has one. */
export interface WebHandler {
  /** `connection` carries the peer's address (`Runloom.handle` takes it; a plain handler may ignore it). */
  handle(request: Request, connection?: ConnectionInfo): Promise<Response>;
  /** `Runloom.dispatch`: when present, requests go through it and JSON answers skip web Request/Response. */
  dispatch?(exchange: Exchange): Promise<Answer>;
}

export type MountOptions = Pick<ToWebRequestOptions, 'trustProxy'>;

/**
 * One exchange: translate, handle, write back. Never rejects: a request that cannot be read as a
 * web request (a malformed URL, a forbidden method) answers 400, a failing handler 500.
 */
export async function handleNodeRequest(
  handler: WebHandler,
  req: IncomingMessage,
  res: ServerResponse,
  options: ToWebRequestOptions = {},
): Promise<void> {
  // A body some parser already consumed is re-encoded by toWebRequest: that rare case takes the web path.
  const bodyParsed = options.parsedBody !== undefined && (req.readableEnded || !req.readable);
  if (handler.dispatch && !bodyParsed) {
    let answer: Answer;
    try {
      answer = await handler.dispatch(new NodeExchange(req, res, options));
    } catch {
      answer = errorJson(500, 'internal error');
    }
    await sendAnswer(res, answer);
    return;
  }
  let request: Request;
  try {
    request = toWebRequest(req, { ...options, response: res });
  } catch (error) {
    await sendAnswer(res, errorJson(400, `the request cannot be read: ${(error as Error).message}`));
    return;
  }
  let response: Response;
  try {
    response = await handler.handle(request, { remoteAddress: peerAddress(req, options.trustProxy ?? false) });
  } catch {
    await sendAnswer(res, errorJson(500, 'internal error'));
    return;
  }
  await sendWebResponse(res, response);
}

/** Writes what `dispatch` answered: serialised JSON in one write with its Content-Length, a `Response` as `sendWebResponse` does. */
async function sendAnswer(res: ServerResponse, answer: Answer): Promise<void> {
  if (answer instanceof Response) return sendWebResponse(res, answer);
  const head: OutgoingHttpHeaders = answer.headers;
  if (answer.text === null) {
    res.writeHead(answer.status, head);
    res.end();
    return;
  }
  head['content-length'] = Buffer.byteLength(answer.text);
  res.writeHead(answer.status, head);
  res.end(answer.text);
}

function errorJson(status: number, message: string): SerializedJson {
  return { status, headers: { ...ALWAYS_HEADERS, 'content-type': 'application/json; charset=utf-8' }, text: JSON.stringify({ error: message }) };
}
