/**
 * Outbound HTTP under an egress policy: run callbacks now, agent HTTP tools later.
 *
 * Guarantees an adapter gives:
 * - Unless the policy allows private networks, a request whose host is, or resolves to, any
 *   address that is not public unicast (loopback, private, link-local, unique-local, CGNAT,
 *   multicast, unspecified, reserved, cloud metadata; IPv4-mapped and -embedded IPv6 forms too)
 *   is refused with `EgressRefusedError` before any connection is opened. The host is resolved
 *   once per request, every resolved address is checked, and the connection goes to a checked
 *   address, so a name that re-resolves between check and connect (DNS rebinding) gains nothing.
 * - Redirects are not followed: a 3xx is returned as it is.
 * - The response body is read up to `maxResponseBytes`; the rest is dropped.
 * - The whole exchange is bounded by `timeoutMs`; failures other than a refusal throw
 *   `HttpRequestError` with a `kind`.
 */
export const HttpClient = Symbol.for('runloom.HttpClient');

export interface EgressPolicy {
  /** Lets requests reach loopback, private, link-local and metadata addresses. */
  allowPrivateNetwork: boolean;
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

export interface HttpClient {
  request(request: HttpRequest): Promise<HttpResponse>;
  post(request: Omit<HttpRequest, 'method'>): Promise<HttpResponse>;
  /**
   * Applies the policy to a URL without sending anything (resolving its host when it is a name):
   * throws `EgressRefusedError` for a refused destination, `HttpRequestError` (kind
   * `invalid_url` or `dns`) when it cannot tell.
   */
  checkDestination(url: string, egress?: EgressPolicy): Promise<void>;
}

/** The destination is not allowed by the egress policy; nothing was sent. */
export class EgressRefusedError extends Error {
  constructor(
    readonly host: string,
    readonly address: string,
    /** What the address is, e.g. `loopback`, `private`, `linkLocal`, `metadata`. */
    readonly range: string,
  ) {
    super(
      host === address
        ? `${address} is ${describeRange(range)} address, which this server does not send requests to`
        : `${host} resolves to ${address}, ${describeRange(range)} address, which this server does not send requests to`,
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
