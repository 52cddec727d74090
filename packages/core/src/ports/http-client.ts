/**
 * Every outbound request the server makes goes through this port, under one egress policy: run
 * callbacks and agent HTTP tools (`request`), model vendors (`fetch`, handed to the AI SDK, and
 * `fetchWhole` for the calls the gateway sends itself).
 *
 * Guarantees an adapter gives:
 * - Unless the policy allows private networks, a request whose host is, or resolves to, any
 *   address that is not public unicast (loopback, private, link-local, unique-local, CGNAT,
 *   multicast, unspecified, reserved, cloud metadata; IPv4-mapped and -embedded IPv6 forms too)
 *   is refused with `EgressRefusedError` before any connection is opened. Every spelling of an
 *   address (`2130706433`, `0x7f000001`, `127.1`, `[::ffff:127.0.0.1]`) is normalised first. A
 *   name is resolved once per connection, every resolved address is checked, and the connection
 *   goes to a checked address, so a name that re-resolves between check and connect (DNS
 *   rebinding) gains nothing; a kept-alive connection is reused only under the policy it was
 *   checked under. The policy's `allow` entries let single destinations in.
 * - `request`: redirects are not followed (a 3xx is returned as it is); the response body is read
 *   up to `maxResponseBytes`; the whole exchange is bounded by `timeoutMs`; failures other than a
 *   refusal throw `HttpRequestError` with a `kind`.
 * - `fetch`: web-standard, the body streamed as it arrives; redirects are followed only after
 *   each new destination has passed the same check.
 */
export const HttpClient = Symbol.for('runloom.HttpClient');

export interface EgressPolicy {
  /** Lets requests reach loopback, private, link-local and metadata addresses. */
  allowPrivateNetwork: boolean;
  /**
   * Single destinations let in although their addresses are not public: `host[:port]` entries,
   * where host is a name (matched as written in the URL) or an IP address in any spelling
   * (matched against the resolved addresses), and no port means every port. A name entry never
   * opens a cloud metadata address; only an entry naming that address does.
   */
  allow?: readonly string[];
}

export interface HttpRequest {
  /** Absolute http(s) URL without credentials. */
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Bound on connect + response; default 10 s. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Default 64 KiB. */
  maxResponseBytes?: number;
  /** Overrides the client's default policy for this request. */
  egress?: EgressPolicy;
}

export interface HttpResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ', '. */
  headers: Record<string, string>;
  /** The body as UTF-8, cut at `maxResponseBytes`. */
  bodyText: string;
  bodyTruncated: boolean;
}

/** A `fetchWhole` answer. */
export interface WholeResponse {
  status: number;
  statusText: string;
  /** Lower-case names; repeated headers joined with ', '. */
  headers: Record<string, string>;
  body: Uint8Array;
  /** The URL that answered (after redirects). */
  url: string;
}

export interface HttpClient {
  request(request: HttpRequest): Promise<HttpResponse>;
  post(request: Omit<HttpRequest, 'method'>): Promise<HttpResponse>;
  /**
   * `globalThis.fetch` under the client's policy, for libraries that take a fetch (the AI SDK's
   * vendor providers). The response body streams; aborting `init.signal` closes the connection.
   * Redirects (`redirect: 'follow'`, the default) are followed at most 10 times, each destination
   * checked before it is contacted, credentials-bearing headers dropped when the origin changes.
   * Rejects with `EgressRefusedError` for a refused destination (nothing sent), with the signal's
   * reason when aborted, with `HttpRequestError` `invalid_url` for a URL it cannot send to, and
   * with `TypeError('fetch failed')` whose `cause` is an `HttpRequestError` when the destination
   * cannot be reached, as `fetch` does.
   */
  fetch(input: string | URL | Request, init?: RequestInit): Promise<Response>;
  /**
   * `fetch`, answering once the whole body has come (decoded as `fetch` decodes it), as plain
   * data instead of a web `Response`: for a caller that reads an answer only whole (a vendor's
   * non-streaming answer), without the web stream and `Response` that `fetch` builds for a body
   * it may stream. Same request, redirects, refusals and rejections as `fetch`; a body cut off
   * rejects as an unreachable destination does (`TypeError('fetch failed')`), or with the signal's
   * reason when it aborted.
   */
  fetchWhole(url: string, init?: RequestInit): Promise<WholeResponse>;
  /**
   * Applies the policy to a URL without sending anything (resolving its host when it is a name):
   * throws `EgressRefusedError` for a refused destination, `HttpRequestError` (kind
   * `invalid_url`, `dns` or `timeout`) when it cannot tell.
   */
  checkDestination(url: string, egress?: EgressPolicy): Promise<void>;
}

/**
 * The destination is not allowed by the egress policy; nothing was sent. The message names the
 * address and what it is, and how an operator lets it in. It is the same whatever listens there,
 * so refusals tell nothing about the network behind the server.
 */
export class EgressRefusedError extends Error {
  constructor(
    readonly host: string,
    readonly address: string,
    /** What the address is, e.g. `loopback`, `private`, `linkLocal`, `metadata`. */
    readonly range: string,
    /** `host:port` as an `--egress-allow` entry that would let this destination in. */
    readonly allowEntry?: string,
  ) {
    super(
      (host === address
        ? `${address} is ${describeRange(range)} address, which this server does not send requests to`
        : `${host} resolves to ${address}, ${describeRange(range)} address, which this server does not send requests to`) +
        (allowEntry === undefined
          ? ''
          : `; to allow it, start the server with --egress-allow ${allowEntry} (this destination only) or --allow-private-network`),
    );
    this.name = 'EgressRefusedError';
  }
}

export type HttpFailureKind = 'invalid_url' | 'invalid_request' | 'dns' | 'network' | 'timeout' | 'aborted';

export class HttpRequestError extends Error {
  constructor(
    readonly kind: HttpFailureKind,
    message: string,
  ) {
    super(message);
    this.name = 'HttpRequestError';
  }
}

const RANGE_WORDS: Record<string, string> = {
  loopback: 'loopback',
  private: 'private',
  linkLocal: 'link-local',
  uniqueLocal: 'unique-local',
  carrierGradeNat: 'carrier-grade NAT (shared)',
  multicast: 'multicast',
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  metadata: 'cloud metadata',
};

/** `a loopback`, `an unspecified`, … */
function describeRange(range: string): string {
  const words = RANGE_WORDS[range] ?? `non-public (${range})`;
  return `${/^[aeiou]/.test(words) ? 'an' : 'a'} ${words}`;
}
