import FindMyWay from 'find-my-way';
import * as z from 'zod';
import { DomainError, type DomainErrorExtras, validationError } from '../domain/errors';
import { refuseTooDeep } from '../domain/input/json-depth';
import { ApiError } from './api-error';
import { type ConnectionInfo, type Exchange, webExchange } from './exchange';
import { type Answer, jsonBodyText, type SerializedJson, serializeJson, toAnswer, toResponse } from './http-result';
import type { BodySpec, HttpMethod, Principal, RouteDefinition, RouteInput } from './route';
import { RateLimiter } from './rate-limiter';
import { sseBodyOf } from './sse';
import type { Clock } from '../ports/clock';

type FindMyWayRouter = FindMyWay.Instance<FindMyWay.HTTPVersion.V1>;

/** What find-my-way keeps with each route: its definition and its place in the route table. */
interface RouteStore {
  definition: RouteDefinition;
  order: number;
  /** How logs and metrics name the route: `GET /v1/runnable/{id}`. */
  name: string;
}

/** Where the router reports each finished request (logs, metrics). */
export interface RequestObserver {
  onRequest(entry: {
    requestId: string;
    method: string;
    route: string;
    status: number;
    durationMs: number;
    accountId?: string;
    error?: unknown;
  }): void;
}

export interface RouterOptions {
  basePath: string;
  jsonBodyLimitBytes: number;
  rateLimit: number;
  authenticate(authorization: string | null): Promise<Principal>;
  observer: RequestObserver;
  /** The time the rate limiter counts on; by default the monotonic clock. */
  clock?: Clock;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** Most query parameters a request may carry, on any route. */
export const MAX_QUERY_PARAMETERS = 256;
/** Longest query parameter name or value, in characters once decoded. */
export const MAX_QUERY_PARAMETER_LENGTH = 8192;


/**
 * The web-standard HTTP surface of core: `handle(Request) → Response`. It matches the route,
 * authenticates, rate-limits, reads and validates input, calls the handler and maps every failure
 * to the error model. It knows nothing of `node:http`.
 */
export class Router {
  /**
   * Path matching and parameters (find-my-way, Fastify's router); everything else is ours. Built on
   * the first request (`paths`): find-my-way compiles functions for every route it adds, a tenth of
   * a server's start that a listening server does not need yet.
   */
  #paths: FindMyWayRouter | undefined;
  /** The methods any route has, to list what a path allows when its method has no route. */
  private readonly methods: HttpMethod[] = [];
  private readonly rateLimiter: RateLimiter;
  #openStreams = 0;

  constructor(
    readonly routes: readonly RouteDefinition[],
    private readonly options: RouterOptions,
  ) {
    // Duplicates are refused here, not on the first request: a method and a path, whatever its parameters' names.
    const seen = new Set<string>();
    for (const { method, path } of routes) {
      const route = `${method} ${path.replace(/\{[^}]+\}/g, '{}')}`;
      if (seen.has(route)) throw new Error(`duplicate route ${method} ${path}`);
      seen.add(route);
      if (!this.methods.includes(method)) this.methods.push(method);
    }
    const clock = options.clock;
    this.rateLimiter = new RateLimiter(options.rateLimit, clock ? () => clock.now().getTime() : undefined);
  }

  private get paths(): FindMyWayRouter {
    if (this.#paths) return this.#paths;
    const paths = FindMyWay({
      caseSensitive: true,
      ignoreTrailingSlash: false,
      // Ids and names are bounded by their schemas (404 past them), not by the matcher's default of 100.
      maxParamLength: 8192,
    });
    this.routes.forEach((definition, order) => {
      const store: RouteStore = { definition, order, name: `${definition.method} ${definition.path}` };
      // Templates are written `{id}`; find-my-way spells a parameter `:id`.
      paths.on(definition.method, definition.path.replace(/\{([^}]+)\}/g, ':$1'), () => undefined, store);
    });
    this.#paths = paths;
    return paths;
  }

  /** Response bodies streaming now: handlers' own bodies (files, events) not yet ended or cancelled. */
  get openStreams(): number {
    return this.#openStreams;
  }

  /** Web-standard request in, response out (`Runloom.handle`); `connection` says who sent it. */
  async handle(request: Request, connection?: ConnectionInfo): Promise<Response> {
    return toResponse(await this.dispatch(webExchange(request, connection)));
  }

  /**
   * `handle` for server adapters: the exchange is read without a web `Request` unless a handler
   * asks for one, and JSON answers come back serialised, for the adapter to write as they are.
   */
  async dispatch(exchange: Exchange): Promise<Answer> {
    const started = performance.now();
    const incomingId = exchange.header('x-request-id');
    const requestId = incomingId && REQUEST_ID.test(incomingId) ? incomingId : crypto.randomUUID();
    let routeName = 'unmatched';
    let principal: Principal | undefined;
    let answer: Answer;
    let failure: unknown;
    try {
      const url = requestTarget(exchange.url);
      const path = this.stripBasePath(url.pathname);
      const match = path === undefined ? undefined : this.match(exchange.method, path);
      if (!match) throw new ApiError('NOT_FOUND', `no route for ${exchange.method} ${url.pathname}`);
      if ('allowed' in match) {
        throw new ApiError('METHOD_NOT_ALLOWED', `${exchange.method} is not allowed here; use ${match.allowed.join(', ')}`, undefined, {
          allow: match.allowed.join(', '),
        });
      }
      const { definition, rawParams } = match;
      routeName = exchange.method === 'HEAD' ? `HEAD ${definition.path}` : match.name;
      if (!definition.public) {
        principal = await this.options.authenticate(exchange.header('authorization'));
        const retryAfter = this.rateLimiter.take(principal.accountId);
        if (retryAfter > 0) {
          throw new ApiError('RATE_LIMITED', `rate limit of ${this.options.rateLimit} requests/s exceeded; retry later`, undefined, {
            'retry-after': String(retryAfter),
          });
        }
      }
      const params = definition.params ? parseParams(definition.params, rawParams) : rawParams;
      const rawQuery = url.search === '' ? {} : boundedQuery(new URLSearchParams(url.search));
      const query = definition.query ? validate(definition.query, rawQuery, 'query') : undefined;
      const body = definition.body ? await this.readBody(definition.body, exchange) : undefined;
      const result = await definition.handle(new HandlerInput(params, query, body, principal as Principal, requestId, exchange));
      answer = toAnswer(result);
    } catch (error) {
      failure = error;
      answer = errorAnswer(error);
    }
    if (exchange.method === 'HEAD') answer = await withoutBody(answer);
    if (answer instanceof Response && answer.body !== null && jsonBodyText(answer) === undefined) answer = this.countedWhileOpen(answer);
    if (answer instanceof Response) {
      answer.headers.set('x-request-id', requestId);
      answer.headers.set('x-content-type-options', 'nosniff');
    } else {
      answer.headers['x-request-id'] = requestId;
      answer.headers['x-content-type-options'] = 'nosniff';
    }
    this.options.observer.onRequest({
      requestId,
      method: exchange.method,
      route: routeName,
      status: answer.status,
      durationMs: performance.now() - started,
      accountId: principal?.accountId,
      error: answer.status >= 500 ? failure : undefined,
    });
    return answer;
  }

  /** `response` with its body counted in `openStreams` until the body ends, fails or is cancelled. */
  private countedWhileOpen(response: Response): Response {
    const eventStream = sseBodyOf(response);
    if (eventStream) {
      // It says when it is done itself: no stream wrapped around it, which each frame would cross.
      this.#openStreams += 1;
      eventStream.onDone(() => (this.#openStreams -= 1));
      return response;
    }
    const reader = response.body!.getReader();
    let open = true;
    const close = (): void => {
      if (open) {
        open = false;
        this.#openStreams -= 1;
      }
    };
    this.#openStreams += 1;
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          try {
            const { done, value } = await reader.read();
            if (done) {
              close();
              controller.close();
            } else {
              controller.enqueue(value);
            }
          } catch (error) {
            close();
            controller.error(error);
          }
        },
        cancel(reason) {
          close();
          return reader.cancel(reason);
        },
      },
      // Pull only when the consumer reads: the source keeps its own backpressure.
      { highWaterMark: 0 },
    );
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  }

  private stripBasePath(pathname: string): string | undefined {
    const base = this.options.basePath;
    if (!base) return pathname;
    if (pathname === base) return '/';
    return pathname.startsWith(`${base}/`) ? pathname.slice(base.length) : undefined;
  }

  private match(
    method: string,
    path: string,
  ): { definition: RouteDefinition; name: string; rawParams: Record<string, string> } | { allowed: string[] } | undefined {
    // HEAD is GET without the body: every GET route answers it.
    const routeMethod = method === 'HEAD' ? 'GET' : method;
    const found = this.methods.includes(routeMethod as HttpMethod) ? this.find(routeMethod as HttpMethod, path) : undefined;
    if (found) return found;
    const allowed = this.methods
      .map((other) => this.find(other, path))
      .filter((other) => other !== undefined)
      .sort((a, b) => a.order - b.order)
      .map((other) => other.definition.method);
    return allowed.length ? { allowed: withHead(allowed) } : undefined;
  }

  private find(method: HttpMethod, path: string): (RouteStore & { rawParams: Record<string, string> }) | undefined {
    const found = this.paths.find(method, path);
    if (!found) return undefined;
    const rawParams = found.params as Record<string, string>;
    // A parameter is one or more characters: `/v1/run/` names no run.
    for (const name in rawParams) if (rawParams[name] === '') return undefined;
    const { definition, order, name } = found.store as RouteStore;
    return { definition, order, name, rawParams };
  }

  private async readBody(spec: BodySpec, exchange: Exchange): Promise<unknown> {
    const mediaType = (exchange.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if ('stream' in spec) {
      if (!spec.stream.mediaTypes.some((accepted) => mediaTypeMatches(accepted, mediaType))) {
        throw new ApiError('UNSUPPORTED_MEDIA_TYPE', `send the body as ${spec.stream.mediaTypes.join(' or ')}`);
      }
      return exchange.body();
    }
    const hasBody = exchange.hasBody && exchange.header('content-length') !== '0';
    if (!hasBody) {
      if (spec.optional) return validate(spec.json, {}, 'body');
      throw ApiError.badRequest('a JSON body is required', [{ path: '', message: 'a JSON body is required' }]);
    }
    const accepted = spec.form ? ['application/json', 'application/x-www-form-urlencoded'] : ['application/json'];
    if (!accepted.includes(mediaType) && !(mediaType.endsWith('+json') && !spec.form)) {
      throw new ApiError('UNSUPPORTED_MEDIA_TYPE', `send the body as ${accepted.join(' or ')} (got ${mediaType || 'no content-type'})`);
    }
    const text = await exchange.readText(this.options.jsonBodyLimitBytes);
    if (text.length === 0 && spec.optional) return validate(spec.json, {}, 'body');
    let raw: unknown;
    if (mediaType === 'application/x-www-form-urlencoded') {
      raw = Object.fromEntries(new URLSearchParams(text));
    } else {
      try {
        raw = JSON.parse(text);
      } catch (error) {
        throw new ApiError('MALFORMED_JSON', `the body is not valid JSON: ${(error as Error).message}`);
      }
      refuseTooDeep(raw, 'body');
    }
    return validate(spec.json, raw, 'body');
  }
}

/** What a route's handler is called with; the web `Request` and its signal are made only when it reads them. */
class HandlerInput implements RouteInput<unknown, unknown, unknown> {
  readonly remoteAddress: string | undefined;
  readonly #exchange: Exchange;

  constructor(
    readonly params: unknown,
    readonly query: unknown,
    readonly body: unknown,
    readonly principal: Principal,
    readonly requestId: string,
    exchange: Exchange,
  ) {
    this.remoteAddress = exchange.remoteAddress;
    this.#exchange = exchange;
  }

  get request(): Request {
    return this.#exchange.request();
  }

  /** A field, so that handlers may take it out of their input like the others. */
  readonly header = (name: string): string | null => this.#exchange.header(name);

  get signal(): AbortSignal {
    return this.#exchange.signal();
  }
}

/** `allowed` with HEAD after GET, as the Allow header lists them. */
function withHead(allowed: string[]): string[] {
  return allowed.flatMap((method) => (method === 'GET' ? ['GET', 'HEAD'] : [method]));
}

/**
 * The answer to HEAD: the GET answer's status and headers without its body. A JSON body's length
 * stays as Content-Length; a streamed body is cancelled unread (its own headers say its length).
 */
async function withoutBody(answer: Answer): Promise<Answer> {
  if (!(answer instanceof Response)) {
    if (answer.text === null) return answer;
    return { status: answer.status, headers: { ...answer.headers, 'content-length': String(utf8Length(answer.text)) }, text: null };
  }
  const json = jsonBodyText(answer);
  const headers = new Headers(answer.headers);
  if (json !== undefined) headers.set('content-length', String(utf8Length(json)));
  await answer.body?.cancel().catch(() => undefined);
  return new Response(null, { status: answer.status, statusText: answer.statusText, headers });
}

function utf8Length(text: string): number {
  return new TextEncoder().encode(text).byteLength;
}

/**
 * The query as an object (a repeated name becomes a list), refused (400) past MAX_QUERY_PARAMETERS
 * parameters or with a name or value over MAX_QUERY_PARAMETER_LENGTH characters, on every route:
 * nothing downstream (schemas, store filters) then sees work that grows without bound.
 */
function boundedQuery(params: URLSearchParams): Record<string, string | string[]> {
  let count = 0;
  for (const [name, value] of params) {
    count += 1;
    if (count > MAX_QUERY_PARAMETERS) {
      throw ApiError.badRequest(`a request may carry at most ${MAX_QUERY_PARAMETERS} query parameters; send fewer (e.g. fewer repeated tags)`);
    }
    if (name.length > MAX_QUERY_PARAMETER_LENGTH || value.length > MAX_QUERY_PARAMETER_LENGTH) {
      throw ApiError.badRequest(
        `query parameter ${name.slice(0, 64)} is over the limit of ${MAX_QUERY_PARAMETER_LENGTH} characters; send a shorter value`,
        [{ path: name.slice(0, 64), message: `at most ${MAX_QUERY_PARAMETER_LENGTH} characters` }],
      );
    }
  }
  return queryObject(params);
}

/** Path ids that fail their schema (not a UUID) name nothing that exists: 404, like a missing id. */
function parseParams(schema: z.ZodType, raw: Record<string, string>): unknown {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const name = String(issue?.path[0] ?? 'id');
  throw new ApiError('NOT_FOUND', `${name} '${raw[name] ?? ''}' not found: ${issue?.message ?? 'invalid'}`);
}

function validate(schema: z.ZodType, raw: unknown, where: 'query' | 'body'): unknown {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  throw validationError(result.error, where);
}

function queryObject(params: URLSearchParams): Record<string, string | string[]> {
  const result: Record<string, string | string[]> = {};
  for (const [key, value] of params) {
    const existing = result[key];
    if (existing === undefined) result[key] = value;
    else if (Array.isArray(existing)) existing.push(value);
    else result[key] = [existing, value];
  }
  return result;
}

function mediaTypeMatches(accepted: string, actual: string): boolean {
  if (accepted === '*/*') return true;
  if (accepted.endsWith('/*')) return actual.startsWith(accepted.slice(0, -1));
  return accepted === actual;
}

/**
 * Maps any thrown value to the error model, the one place where a domain refusal gets its status
 * and envelope (docs/api.md#conventions); never leaks a stack trace.
 */
function errorAnswer(error: unknown): SerializedJson {
  if (error instanceof DomainError) return errorAnswer(new ApiError(error.code, error.message, error.details, domainHeaders(error.extras)));
  if (error instanceof ApiError) {
    const body: Record<string, unknown> = { error: error.message, code: error.code };
    if (error.details) body.details = error.details;
    return serializeJson({
      status: error.status,
      body,
      headers: { ...(error.status === 401 ? { 'www-authenticate': 'Bearer' } : {}), ...error.headers },
    });
  }
  if (error instanceof z.ZodError) return errorAnswer(validationError(error));
  return serializeJson({ status: 500, body: { error: 'internal error', code: 'INTERNAL' } });
}

/** The headers a domain refusal's extras become: the Bearer challenge of a 401, the Retry-After of a 429. */
function domainHeaders({ challenge, retryAfterSeconds }: DomainErrorExtras): Record<string, string> | undefined {
  if (challenge) {
    const { realm, error, description } = challenge;
    const parts = [`realm="${realm}"`];
    if (error) parts.push(`error="${error}"`);
    if (description) parts.push(`error_description="${description}"`);
    return { 'www-authenticate': `Bearer ${parts.join(', ')}` };
  }
  return retryAfterSeconds === undefined ? undefined : { 'retry-after': String(retryAfterSeconds) };
}

/** The parts of a request URL the router reads: its path as URL parsing gives it, and its query without `?`. */
interface RequestTarget {
  pathname: string;
  search: string;
}

/** A path that URL parsing leaves as it is: nothing to percent-encode, no backslash, no dot segment to resolve. */
const PLAIN_PATH = /^\/[\w\-.~!$&'()*+,;=:@%/]*$/;
const PLAIN_QUERY = /^[\x21-\x22\x24-\x7e]*$/;
const DOT_SEGMENT = /\/(?:\.|%2e)/i;

/**
 * `pathname` and `search` of `url`, read without parsing the whole URL when the path and query are
 * plain (a few characters' scan instead of a `URL` and its `URLSearchParams` on every request);
 * anything else goes through `URL`. A URL that does not parse is the client's: 400.
 */
function requestTarget(url: string): RequestTarget {
  const pathStart = url.indexOf('/', url.indexOf('://') + 3);
  if (pathStart !== -1) {
    const queryStart = url.indexOf('?', pathStart);
    const pathname = queryStart === -1 ? url.slice(pathStart) : url.slice(pathStart, queryStart);
    const search = queryStart === -1 ? '' : url.slice(queryStart + 1);
    if (PLAIN_PATH.test(pathname) && !DOT_SEGMENT.test(pathname) && PLAIN_QUERY.test(search)) return { pathname, search };
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw ApiError.badRequest('the request URL cannot be read');
  }
  return { pathname: parsed.pathname, search: parsed.search.slice(1) };
}
