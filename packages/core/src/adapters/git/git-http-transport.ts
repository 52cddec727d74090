import type { GitHttpRequest, GitHttpResponse, HttpClient as GitHttpPlugin } from 'isomorphic-git';
import { type HttpClient, HttpRequestError } from '../../ports/http-client';

/**
 * isomorphic-git's `http` plugin on the `HttpClient` port's `fetch`, so every request of a clone,
 * pull or push obeys the egress policy (each destination checked, redirects included) like model
 * vendors and callbacks do. `signal` bounds every request of one operation; each request must also
 * be answered (its status and headers) within `answerTimeoutMs`, so a remote that accepts the
 * connection and says nothing fails in seconds rather than at the operation's bound.
 *
 * Request bodies (the packs a push sends) are collected first, as isomorphic-git's own web plugin
 * does: the port's `fetch` sends a buffered body. Response bodies stream.
 */
export function gitHttpTransport(http: HttpClient, signal: AbortSignal, answerTimeoutMs: number): GitHttpPlugin {
  return {
    async request(request: GitHttpRequest): Promise<GitHttpResponse> {
      const body = request.body ? await collect(request.body) : undefined;
      const unanswered = new AbortController();
      const timer = setTimeout(() => unanswered.abort(new HttpRequestError('timeout', `no answer within ${answerTimeoutMs / 1000} s`)), answerTimeoutMs);
      let response: Response;
      try {
        response = await http.fetch(request.url, {
          method: request.method ?? 'GET',
          headers: request.headers ?? {},
          body,
          signal: AbortSignal.any([signal, unanswered.signal]),
        });
      } finally {
        clearTimeout(timer);
      }
      const headers: Record<string, string> = {};
      response.headers.forEach((value, name) => {
        headers[name] = value;
      });
      return {
        url: response.url,
        method: request.method,
        statusCode: response.status,
        statusMessage: response.statusText,
        headers,
        body: response.body ? chunksOf(response.body) : undefined,
      };
    },
  };
}

async function collect(chunks: AsyncIterableIterator<Uint8Array>): Promise<Uint8Array<ArrayBuffer>> {
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of chunks) {
    parts.push(chunk);
    size += chunk.byteLength;
  }
  const whole = new Uint8Array(size);
  let offset = 0;
  for (const part of parts) {
    whole.set(part, offset);
    offset += part.byteLength;
  }
  return whole;
}

/** The stream as the async iterator isomorphic-git reads; Node's web streams are async iterable. */
function chunksOf(stream: ReadableStream<Uint8Array>): AsyncIterableIterator<Uint8Array> {
  return (stream as unknown as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]() as AsyncIterableIterator<Uint8Array>;
}
