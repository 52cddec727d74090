import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import {
  EgressRefusedError,
  type EgressPolicy,
  type HttpClient,
  HttpRequestError,
  type HttpRequest,
  type HttpResponse,
} from '../../ports/http-client';
import { nonPublicRange } from './address-policy';

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

/** A parsed request target. `hostname` has no brackets; `literal` tells an IP literal from a name. */
interface Target {
  url: URL;
  hostname: string;
  literal: boolean;
}

/**
 * The `HttpClient` on `node:http`/`node:https`. Each request resolves its host once (with the
 * injected resolver, default `dns.lookup`), checks every address against the policy, and hands
 * Node a `lookup` that answers exactly those addresses, so the socket connects to what was
 * checked and Node never resolves the name again. Keep-alive sockets are pooled per policy: a
 * socket opened under a permissive policy is never reused by a guarded request.
 */
export class GuardedHttpClient implements HttpClient {
  private readonly egress: EgressPolicy;
  private readonly resolve: HostResolver;
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly agents = new Map<string, http.Agent>();

  constructor(options: GuardedHttpClientOptions) {
    this.egress = options.egress;
    this.resolve = options.resolve ?? resolveWithDns;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
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
    const addresses = await untilAborted(this.checkedAddresses(target, egress), signal, failure);
    return this.send(target, addresses, request, egress, signal, failure);
  }

  async checkDestination(url: string, egress: EgressPolicy = this.egress): Promise<void> {
    await this.checkedAddresses(parseTarget(url), egress);
  }

  /** The target's addresses, every one allowed by the policy; refuses before anything is sent. */
  private async checkedAddresses(target: Target, egress: EgressPolicy): Promise<ResolvedAddress[]> {
    const addresses = target.literal ? [{ address: target.hostname, family: net.isIP(target.hostname) as 4 | 6 }] : await this.resolveName(target.hostname);
    if (egress.allowPrivateNetwork) return addresses;
    for (const { address } of addresses) {
      const range = nonPublicRange(address);
      if (range !== undefined) throw new EgressRefusedError(target.hostname, address, range);
    }
    return addresses;
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
    addresses: ResolvedAddress[],
    request: HttpRequest,
    egress: EgressPolicy,
    signal: AbortSignal,
    failure: () => HttpRequestError,
  ): Promise<HttpResponse> {
    const maxBytes = request.maxResponseBytes ?? this.maxResponseBytes;
    const secure = target.url.protocol === 'https:';
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
      const options: http.RequestOptions = {
        hostname: target.hostname,
        port: target.url.port || (secure ? 443 : 80),
        path: `${target.url.pathname}${target.url.search}`,
        method: request.method ?? 'GET',
        headers: request.headers,
        agent: this.agentFor(secure, egress),
        lookup: fixedLookup(addresses),
      };
      try {
        outgoing = (secure ? https : http).request(options, (response) => {
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
      outgoing.on('error', (error) => settle(() => reject(signal.aborted ? failure() : networkError(error))));
      signal.addEventListener('abort', onAbort, { once: true });
      outgoing.end(request.body);
    });
  }

  private agentFor(secure: boolean, egress: EgressPolicy): http.Agent {
    const key = `${secure ? 'https' : 'http'}:${egress.allowPrivateNetwork ? 'open' : 'guarded'}`;
    let agent = this.agents.get(key);
    if (!agent) {
      agent = secure ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
      this.agents.set(key, agent);
    }
    return agent;
  }
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
  return { url, hostname, literal: net.isIP(hostname) !== 0 };
}

async function resolveWithDns(hostname: string): Promise<ResolvedAddress[]> {
  const answers = await dns.promises.lookup(hostname, { all: true, verbatim: true });
  return answers.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
}

/** A `lookup` for Node's socket that answers the already-checked addresses and nothing else. */
function fixedLookup(addresses: ResolvedAddress[]): net.LookupFunction {
  return (hostname, options, callback) => {
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
  };
}

/** Settles with `work`, or rejects as soon as `signal` aborts (a DNS lookup cannot be cancelled). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal, failure: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(failure());
    signal.addEventListener('abort', onAbort, { once: true });
    void work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
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
