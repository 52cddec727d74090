import dns from 'node:dns';
import http from 'node:http';
import { isIP, isIPv6, type LookupFunction } from 'node:net';
import { finished, pipeline, type Readable } from 'node:stream';
import { constants as zlibConstants, createBrotliDecompress, createGunzip, createInflate, type BrotliDecompress, type Gunzip, type Inflate } from 'node:zlib';
import {
  EgressRefusedError,
  type EgressPolicy,
  type HttpClient,
  HttpRequestError,
  type HttpRequest,
  type HttpResponse,
  type WholeResponse,
} from '../../ports/http-client';
import { type EgressAllowEntry, nonPublicRange, normalizedAddress, parseEgressAllow } from './address-policy';

/**
 * `node:https`, with `node:tls`, loaded on the first https request: a server that never calls out
 * (most of them) loaded both at every start.
 */
const https = (): typeof import('node:https') => process.getBuiltinModule('node:https');

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to its addresses; injectable so tests can play a rebinding DNS server. */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface GuardedHttpClientOptions {
  /** Default policy; a request may carry its own. */
  egress: EgressPolicy;
  resolve?: HostResolver;
  timeoutMs?: number;
  maxResponseBytes?: number;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;
/** What `fetch` follows at most; browsers and undici allow 20, no vendor API needs more than one. */
const MAX_REDIRECTS = 10;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Headers kept when a redirect leaves the origin: none of them can carry a credential. */
const CROSS_ORIGIN_HEADERS = new Set(['accept', 'accept-encoding', 'accept-language', 'content-type', 'user-agent']);

/** A parsed request target. `hostname` has no brackets; `literal` tells an IP literal from a name. */
interface Target {
  url: URL;
  hostname: string;
  literal: boolean;
}

/**
 * The `HttpClient` on `node:http`/`node:https`. An IP literal is checked before its request is
 * sent; a name when a connection to it is opened: Node's `lookup` of the new socket resolves it
 * (with the injected resolver, default `dns.lookup`), checks every address against the policy and
 * answers exactly those, so the socket connects to what was checked and Node never resolves the
 * name again. Keep-alive sockets are pooled per policy (its allow entries included): a request on
 * a kept-alive socket goes to the address checked when it opened, under the same policy, with no
 * DNS lookup of its own.
 */
export class GuardedHttpClient implements HttpClient {
  private readonly egress: EgressPolicy;
  private readonly resolve: HostResolver;
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly agents = new Map<string, http.Agent>();
  private readonly allowLists = new WeakMap<readonly string[], EgressAllowEntry[]>();

  /** Throws when an `egress.allow` entry is not `host[:port]`. */
  constructor(options: GuardedHttpClientOptions) {
    this.egress = options.egress;
    this.resolve = options.resolve ?? resolveWithDns;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.allowList(this.egress);
    // Libraries call `fetch` detached from the client (`const { fetch } = …`).
    this.fetch = this.fetch.bind(this);
  }

  post(request: Omit<HttpRequest, 'method'>): Promise<HttpResponse> {
    return this.request({ ...request, method: 'POST' });
  }

  async request(request: HttpRequest): Promise<HttpResponse> {
    const target = parseTarget(request.url);
    const egress = request.egress ?? this.egress;
    const timeoutMs = request.timeoutMs ?? this.timeoutMs;
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = request.signal ? AbortSignal.any([request.signal, deadline]) : deadline;
    const failure = (): HttpRequestError =>
      deadline.aborted ? new HttpRequestError('timeout', `no answer within ${timeoutMs} ms`) : new HttpRequestError('aborted', 'the request was aborted');
    if (signal.aborted) throw failure();
    // An IP literal is checked now; a name when a connection to it is opened (`outgoing`).
    if (target.literal) this.allowedAddresses(target, literalAddresses(target), egress);
    return this.send(target, request, egress, signal, failure);
  }

  async checkDestination(url: string, egress: EgressPolicy = this.egress): Promise<void> {
    const target = parseTarget(url);
    // Nothing is refused: no need to ask DNS.
    if (egress.allowPrivateNetwork) return;
    const checked = this.checkedAddresses(target, egress);
    if (Array.isArray(checked)) return;
    const deadline = AbortSignal.timeout(this.timeoutMs);
    await untilAborted(checked, deadline, () => new HttpRequestError('timeout', `${target.hostname} did not resolve within ${this.timeoutMs} ms`));
  }

  async fetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
    const answer = await this.followed(input, init);
    return webResponse(answer.response, answer.url, answer.redirected, answer.signal);
  }

  async fetchWhole(url: string, init: RequestInit = {}): Promise<WholeResponse> {
    const answer = await this.followed(url, init);
    return wholeResponse(answer.response, answer.url, answer.signal);
  }

  /**
   * Sends what `fetch` is asked to, following redirects as it does: the last hop's response, once
   * its headers are in (its body left to read), with the URL it answered from.
   */
  private async followed(
    input: string | URL | Request,
    init: RequestInit,
  ): Promise<{ response: http.IncomingMessage; url: URL; redirected: boolean; signal: AbortSignal | undefined }> {
    let target = parseTarget(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const signal = init.signal ?? (input instanceof Request ? input.signal : undefined) ?? undefined;
    signal?.throwIfAborted();
    const redirect = init.redirect ?? (input instanceof Request ? input.redirect : 'follow');
    const request = plainRequest(input, init) ?? (await webRequest(input, init));
    let method = request.method;
    let body = request.body;
    const headers: Record<string, string> = { accept: '*/*', 'accept-encoding': 'gzip, deflate, br' };
    for (const [name, value] of request.headers) headers[name] = value;
    for (let redirects = 0; ; redirects += 1) {
      // An IP literal is checked now; a name when a connection to it is opened (`outgoing`).
      if (target.literal) this.allowedAddresses(target, literalAddresses(target), this.egress);
      const response = await this.open(target, { method, headers, body, signal });
      const location = response.headers.location;
      if (!REDIRECT_STATUSES.has(response.statusCode ?? 0) || location === undefined || redirect === 'manual') {
        return { response, url: target.url, redirected: redirects > 0, signal };
      }
      response.destroy();
      if (redirect === 'error') throw fetchFailed(new HttpRequestError('network', `${target.url.host} answered a redirect, which this request does not follow`));
      if (redirects === MAX_REDIRECTS) throw fetchFailed(new HttpRequestError('network', `more than ${MAX_REDIRECTS} redirects`));
      const next = parseTarget(new URL(location, target.url).href);
      const status = response.statusCode!;
      if ((status === 303 && method !== 'GET' && method !== 'HEAD') || ((status === 301 || status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
        for (const name of ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location']) delete headers[name];
      }
      if (next.url.origin !== target.url.origin) {
        for (const name of Object.keys(headers)) if (!CROSS_ORIGIN_HEADERS.has(name)) delete headers[name];
      }
      target = next;
    }
  }

  /**
   * The target's addresses, every one allowed by the policy; refuses (throws, or rejects) before
   * anything is sent. An IP literal is checked at once, without a promise to wait for (and race
   * against the signal): only a name needs DNS.
   */
  private checkedAddresses(target: Target, egress: EgressPolicy): ResolvedAddress[] | Promise<ResolvedAddress[]> {
    if (target.literal) return this.allowedAddresses(target, literalAddresses(target), egress);
    return this.resolveName(target.hostname).then((addresses) => this.allowedAddresses(target, addresses, egress));
  }

  /**
   * `addresses` when the policy allows every one; else refuses. An address outside public unicast
   * passes only when the policy allows private networks, or an allow entry names it (an address
   * entry), or names the target's host (a name entry; never for a metadata address), on the
   * target's port.
   */
  private allowedAddresses(target: Target, addresses: ResolvedAddress[], egress: EgressPolicy): ResolvedAddress[] {
    if (egress.allowPrivateNetwork) return addresses;
    const port = Number(target.url.port || (target.url.protocol === 'https:' ? 443 : 80));
    const allow = this.allowList(egress).filter((entry) => entry.port === undefined || entry.port === port);
    const name = target.hostname.replace(/\.$/, '');
    const nameAllowed = !target.literal && allow.some((entry) => entry.kind === 'name' && entry.host === name);
    for (const { address } of addresses) {
      const range = nonPublicRange(address);
      if (range === undefined || (nameAllowed && range !== 'metadata')) continue;
      if (range !== 'invalid' && allow.some((entry) => entry.kind === 'address' && entry.host === normalizedAddress(address))) continue;
      const entryHost = range === 'metadata' || target.literal ? address : name;
      throw new EgressRefusedError(target.hostname, address, range, `${isIPv6(entryHost) ? `[${entryHost}]` : entryHost}:${port}`);
    }
    return addresses;
  }

  private allowList(egress: EgressPolicy): EgressAllowEntry[] {
    if (!egress.allow?.length) return [];
    let entries = this.allowLists.get(egress.allow);
    if (!entries) {
      entries = parseEgressAllow(egress.allow);
      this.allowLists.set(egress.allow, entries);
    }
    return entries;
  }

  private async resolveName(hostname: string): Promise<ResolvedAddress[]> {
    let addresses: ResolvedAddress[];
    try {
      addresses = await this.resolve(hostname);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new HttpRequestError('dns', `${hostname} could not be resolved${code ? ` (${code})` : ''}`);
    }
    if (addresses.length === 0) throw new HttpRequestError('dns', `${hostname} has no addresses`);
    return addresses;
  }

  private send(
    target: Target,
    request: HttpRequest,
    egress: EgressPolicy,
    signal: AbortSignal,
    failure: () => HttpRequestError,
  ): Promise<HttpResponse> {
    const maxBytes = request.maxResponseBytes ?? this.maxResponseBytes;
    return new Promise<HttpResponse>((resolve, reject) => {
      let settled = false;
      const settle = (outcome: () => void): void => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        outcome();
      };
      let outgoing: http.ClientRequest | undefined;
      const onAbort = (): void => {
        const error = failure();
        settle(() => reject(error));
        outgoing?.destroy(error);
      };
      try {
        outgoing = this.outgoing(target, request.method ?? 'GET', request.headers, egress, (response) => {
          const chunks: Buffer[] = [];
          let received = 0;
          const finish = (truncated: boolean): void =>
            settle(() =>
              resolve({
                status: response.statusCode ?? 0,
                headers: flatHeaders(response.headers),
                bodyText: Buffer.concat(chunks).toString('utf8'),
                bodyTruncated: truncated,
              }),
            );
          response.on('data', (chunk: Buffer) => {
            const room = maxBytes - received;
            chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
            received += Math.min(chunk.length, room);
            if (chunk.length > room) {
              finish(true);
              response.destroy();
            }
          });
          response.on('end', () => finish(false));
          response.on('error', (error) => settle(() => reject(networkError(error))));
        });
      } catch (error) {
        // Node validates header names and values synchronously.
        reject(new HttpRequestError('invalid_request', error instanceof Error ? error.message : String(error)));
        return;
      }
      outgoing.on('error', (error) => settle(() => reject(signal.aborted ? failure() : connectionError(error))));
      signal.addEventListener('abort', onAbort, { once: true });
      outgoing.end(request.body);
    });
  }

  /**
   * A request to `target`. A new connection to a name resolves it then, checks every address under
   * `egress` (refusing before connecting) and connects to one of those, never resolving again; a
   * kept-alive connection was checked so when it opened, and is reused only under the same policy
   * (`agentFor`). So a name is resolved and checked once per connection, not per request.
   */
  private outgoing(
    target: Target,
    method: string,
    headers: Record<string, string> | undefined,
    egress: EgressPolicy,
    onResponse: (response: http.IncomingMessage) => void,
  ): http.ClientRequest {
    const secure = target.url.protocol === 'https:';
    const options: http.RequestOptions = {
      hostname: target.hostname,
      port: target.url.port || (secure ? 443 : 80),
      path: `${target.url.pathname}${target.url.search}`,
      method,
      headers,
      agent: this.agentFor(secure, egress),
      lookup: (hostname, lookupOptions, callback) => {
        Promise.resolve(this.checkedAddresses(target, egress)).then(
          (addresses) => answerLookup(addresses, hostname, lookupOptions, callback),
          (error: Error) => callback(error, '', 0),
        );
      },
    };
    return (secure ? https() : http).request(options, onResponse);
  }

  /** Sends one `fetch` hop and answers its response once the headers are in; the body is left to read. */
  private open(
    target: Target,
    request: { method: string; headers: Record<string, string>; body: Uint8Array | undefined; signal: AbortSignal | undefined },
  ): Promise<http.IncomingMessage> {
    const { signal } = request;
    return new Promise<http.IncomingMessage>((resolve, reject) => {
      let outgoing: http.ClientRequest;
      const onAbort = (): void => {
        reject(signal!.reason);
        outgoing.destroy();
      };
      try {
        outgoing = this.outgoing(target, request.method, request.headers, this.egress, (response) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(response);
        });
      } catch (error) {
        reject(new HttpRequestError('invalid_request', error instanceof Error ? error.message : String(error)));
        return;
      }
      outgoing.on('error', (error) => {
        signal?.removeEventListener('abort', onAbort);
        const failed = connectionError(error);
        reject(signal?.aborted ? signal.reason : failed instanceof EgressRefusedError ? failed : fetchFailed(failed));
      });
      if (signal?.aborted) {
        onAbort();
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      outgoing.end(request.body);
    });
  }

  /** The connection pool of a policy: a connection checked under one policy is never reused under another. */
  private agentFor(secure: boolean, egress: EgressPolicy): http.Agent {
    const key = `${secure ? 'https' : 'http'} ${egress.allowPrivateNetwork ? 'open' : `guarded ${(egress.allow ?? []).join(' ')}`}`;
    let agent = this.agents.get(key);
    if (!agent) {
      agent = secure ? new (https().Agent)({ keepAlive: true }) : new http.Agent({ keepAlive: true });
      this.agents.set(key, agent);
    }
    return agent;
  }
}

/** What `fetch` sends: the method, headers (lower-case names, in name order) and body bytes the caller's arguments describe. */
interface OutgoingRequest {
  method: string;
  headers: [string, string][];
  body: Uint8Array | undefined;
}

/** Methods `fetch` uppercases whatever their case; the rest pass as written. */
const NORMALIZED_METHODS = new Set(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT']);

/**
 * The request of the common call (a URL, a text or byte body: what the AI SDK and webhooks send),
 * read without building a web `Request`, which costs ~25 µs a call; undefined for anything else,
 * which `webRequest` reads as `fetch` would.
 */
function plainRequest(input: string | URL | Request, init: RequestInit): OutgoingRequest | undefined {
  if (input instanceof Request) return undefined;
  const method = (init.method ?? 'GET').toUpperCase();
  if (!NORMALIZED_METHODS.has(method)) return undefined;
  const given = init.body;
  if (given !== undefined && given !== null && typeof given !== 'string' && !(given instanceof Uint8Array)) return undefined;
  const hasBody = given !== undefined && given !== null;
  // fetch refuses these; the web Request says so in its own words.
  if (hasBody && (method === 'GET' || method === 'HEAD')) return undefined;
  const headers = outgoingHeaders(init.headers);
  if (typeof given === 'string' && !headers.some(([name]) => name === 'content-type')) headers.push(['content-type', 'text/plain;charset=UTF-8']);
  return { method, headers: headers.sort(byName), body: typeof given === 'string' ? Buffer.from(given, 'utf8') : (given ?? undefined) };
}

/** A header name `fetch` sends as it is: a lower-case token. */
const PLAIN_HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9a-z]+$/;
/** A header value `fetch` sends as it is: Latin-1 without controls but tab, nor whitespace around it. */
const PLAIN_HEADER_VALUE = /^(?:[\x21-\x7e\x80-\xff](?:[\t\x20-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?)?$/;

/**
 * The headers as `fetch` sends them. A plain record already in that form (lower-case names, plain
 * values: what the AI SDK and the gateway pass) is taken as it is; anything else goes through a
 * web `Headers`, which normalises it or refuses it as `fetch` does (and costs ~5 µs a call).
 */
function outgoingHeaders(given: HeadersInit | undefined): [string, string][] {
  if (given !== undefined && Object.getPrototypeOf(given) === Object.prototype) {
    const entries = Object.entries(given as Record<string, unknown>);
    if (entries.every(([name, value]) => typeof value === 'string' && PLAIN_HEADER_NAME.test(name) && PLAIN_HEADER_VALUE.test(value))) return entries as [string, string][];
  }
  return entriesOf(new Headers(given));
}

/** A web `Headers`' entries, in its (name) order. */
function entriesOf(headers: Headers): [string, string][] {
  const entries: [string, string][] = [];
  headers.forEach((value, name) => entries.push([name, value]));
  return entries;
}

function byName([a]: [string, string], [b]: [string, string]): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

async function webRequest(input: string | URL | Request, init: RequestInit): Promise<OutgoingRequest> {
  const request = new Request(input, { ...init, signal: undefined });
  return { method: request.method, headers: entriesOf(request.headers), body: request.body ? new Uint8Array(await request.arrayBuffer()) : undefined };
}

function parseTarget(raw: string): Target {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new HttpRequestError('invalid_url', 'the URL is not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new HttpRequestError('invalid_url', `the URL must be http or https, not ${url.protocol.slice(0, -1)}`);
  if (url.username !== '' || url.password !== '') throw new HttpRequestError('invalid_url', 'the URL must not carry credentials (user:password@)');
  // WHATWG parsing already turned numeric IPv4 forms (0x7f.1, 2130706433) into dotted quads.
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return { url, hostname, literal: isIP(hostname) !== 0 };
}

async function resolveWithDns(hostname: string): Promise<ResolvedAddress[]> {
  const answers = await dns.promises.lookup(hostname, { all: true, verbatim: true });
  return answers.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
}

/** The address an IP literal target names. */
function literalAddresses(target: Target): ResolvedAddress[] {
  return [{ address: target.hostname, family: isIP(target.hostname) as 4 | 6 }];
}

/** Answers Node's socket `lookup` with the checked addresses and nothing else. */
function answerLookup(addresses: ResolvedAddress[], hostname: string, options: dns.LookupOptions, callback: Parameters<LookupFunction>[2]): void {
  const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
  const candidates = family === 4 || family === 6 ? addresses.filter((address) => address.family === family) : addresses;
  const first = candidates[0];
  if (!first) {
    callback(Object.assign(new Error(`${hostname} has no IPv${family} address`), { code: 'ENOTFOUND' }), '', 0);
  } else if (options.all) {
    callback(null, candidates);
  } else {
    callback(null, first.address, first.family);
  }
}

/** A request's failure as the port reports it: a refusal or a name that did not resolve (from a connection's lookup) as they are, else a network error. */
function connectionError(error: Error): EgressRefusedError | HttpRequestError {
  return error instanceof EgressRefusedError || error instanceof HttpRequestError ? error : networkError(error);
}

/** Settles with `work`, or rejects as soon as `signal` aborts (a DNS lookup cannot be cancelled). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal, failure: () => unknown): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(failure());
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    void work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** What `fetch` rejects with when the destination cannot be reached: a TypeError with the cause. */
function fetchFailed(cause: HttpRequestError): TypeError {
  return new TypeError('fetch failed', { cause });
}

/**
 * The web `Response` of a `fetch` hop: its body streamed from the socket and decoded as `fetch`
 * does (gzip, deflate, br); aborting `signal` errors the body with the signal's reason and closes
 * the connection, and so does cancelling the body.
 */
function webResponse(response: http.IncomingMessage, url: URL, redirected: boolean, signal: AbortSignal | undefined): Response {
  const status = answeredStatus(response, url);
  const headers = new Headers();
  for (let index = 0; index + 1 < response.rawHeaders.length; index += 2) headers.append(response.rawHeaders[index]!, response.rawHeaders[index + 1]!);
  closedOnAbort(response, signal);
  const body = decodedBody(response, status);
  if (body !== response && body !== null) {
    headers.delete('content-encoding');
    headers.delete('content-length');
  }
  const answer = new Response(body === null ? null : webBody(body), {
    status,
    statusText: response.statusMessage ?? '',
    headers,
  });
  Object.defineProperty(answer, 'url', { value: url.href });
  Object.defineProperty(answer, 'redirected', { value: redirected });
  return answer;
}

/**
 * The `WholeResponse` of a `fetchWhole` hop: its body read to the end and decoded as `fetch` does;
 * rejects with the signal's reason when it aborts first, as `fetch` when the connection fails.
 */
function wholeResponse(response: http.IncomingMessage, url: URL, signal: AbortSignal | undefined): Promise<WholeResponse> {
  const status = answeredStatus(response, url);
  closedOnAbort(response, signal);
  const body = decodedBody(response, status);
  const headers = flatHeaders(response.headers);
  if (body !== response && body !== null) {
    delete headers['content-encoding'];
    delete headers['content-length'];
  }
  const answer = (bytes: Buffer): WholeResponse => ({ status, statusText: response.statusMessage ?? '', headers, body: bytes, url: url.href });
  if (body === null) return Promise.resolve(answer(Buffer.alloc(0)));
  return new Promise<WholeResponse>((resolve, reject) => {
    const chunks: Buffer[] = [];
    body.on('data', (chunk: Buffer) => chunks.push(chunk));
    finished(body, (error) => {
      if (!error) resolve(answer(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
      else reject(signal?.aborted ? signal.reason : fetchFailed(networkError(error)));
    });
  });
}

/** The hop's status; a status `fetch` cannot answer (1xx, over 599) fails as fetch does. */
function answeredStatus(response: http.IncomingMessage, url: URL): number {
  const status = response.statusCode ?? 0;
  if (status < 200 || status > 599) {
    response.destroy();
    throw fetchFailed(new HttpRequestError('network', `${url.host} answered status ${status}`));
  }
  return status;
}

/** Aborting `signal` destroys the response with the signal's reason, closing the connection. */
function closedOnAbort(response: http.IncomingMessage, signal: AbortSignal | undefined): void {
  if (!signal) return;
  const onAbort = (): void => {
    response.destroy(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
  };
  signal.addEventListener('abort', onAbort, { once: true });
  response.once('close', () => signal.removeEventListener('abort', onAbort));
}

/** The body as `fetch` reads it: none for 204, 205 and 304 (drained), else decoded per `content-encoding`. */
function decodedBody(response: http.IncomingMessage, status: number): Readable | null {
  if (status === 204 || status === 205 || status === 304) {
    response.resume();
    return null;
  }
  const decoder = decoderFor(response.headers['content-encoding'] ?? null);
  return decoder ? pipeline(response, decoder, () => undefined) : response;
}

/** Bytes a body's web stream queues before its source is paused until the reader catches up. */
const BODY_QUEUE_BYTES = 64 * 1024;

/**
 * `source` as a web stream with one chunk per socket read: node emits each HTTP chunk of a read
 * as its own `data` event (a streaming vendor writes an event per chunk), all before any reader
 * runs; they are joined and handed over once the read is done, so a reader pays one web-stream
 * chunk per read, not per event (`Readable.toWeb` enqueues each). The source is paused while the
 * queue is full; cancelling the body destroys it; an error or an early close errors the body.
 */
function webBody(source: Readable): ReadableStream<Uint8Array> {
  let held: Buffer[] = [];
  let settled = false;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const handOver = (): void => {
          if (settled || held.length === 0) return;
          controller.enqueue(held.length === 1 ? held[0]! : Buffer.concat(held));
          held = [];
          if ((controller.desiredSize ?? 0) <= 0) source.pause();
        };
        source.on('data', (bytes: Buffer) => {
          // A tick queued now runs once this read's other chunks are in.
          if (held.push(bytes) === 1) process.nextTick(handOver);
        });
        finished(source, (error) => {
          if (settled) return;
          if (error) {
            settled = true;
            controller.error(error);
            return;
          }
          handOver();
          settled = true;
          controller.close();
        });
      },
      pull() {
        source.resume();
      },
      cancel() {
        settled = true;
        held = [];
        source.destroy();
      },
    },
    { highWaterMark: BODY_QUEUE_BYTES, size: (chunk) => chunk.byteLength },
  );
}

function decoderFor(encoding: string | null): Gunzip | Inflate | BrotliDecompress | undefined {
  switch (encoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return createGunzip({ flush: zlibConstants.Z_SYNC_FLUSH, finishFlush: zlibConstants.Z_SYNC_FLUSH });
    case 'deflate':
      return createInflate({ flush: zlibConstants.Z_SYNC_FLUSH, finishFlush: zlibConstants.Z_SYNC_FLUSH });
    case 'br':
      return createBrotliDecompress({ flush: zlibConstants.BROTLI_OPERATION_FLUSH, finishFlush: zlibConstants.BROTLI_OPERATION_FLUSH });
    default:
      return undefined;
  }
}

function networkError(error: Error): HttpRequestError {
  const code = (error as NodeJS.ErrnoException).code;
  return new HttpRequestError('network', code && !error.message.includes(code) ? `${code}: ${error.message}` : error.message);
}

function flatHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}
