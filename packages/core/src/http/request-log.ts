import type { Logger } from '../ports/logger';
import type { RequestObserver } from './router';
import type { Metrics } from '../ports/metrics';

/** One structured log line and one metric sample per request; never bodies, tokens or secrets. */
export class RequestLog implements RequestObserver {
  /** The request counter of each route and status: a bounded set, since routes are templates. */
  private readonly requestCounters = new Map<string, () => void>();

  constructor(
    private readonly logger: Logger,
    private readonly metrics: Metrics,
  ) {}

  onRequest(entry: Parameters<RequestObserver['onRequest']>[0]): void {
    const { requestId, method, route, status, accountId, error } = entry;
    const line = { requestId, method, route, status, accountId, durationMs: Math.round(entry.durationMs * 100) / 100 };
    if (error !== undefined) {
      this.logger.error({ ...line, err: error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : String(error) }, 'request failed');
    } else {
      this.logger.info(line, 'request');
    }
    this.requestCounter(route, status)();
  }

  private requestCounter(route: string, status: number): () => void {
    const key = `${status} ${route}`;
    let count = this.requestCounters.get(key);
    if (!count) {
      count = this.metrics.counter('runloom_http_requests_total', 'HTTP requests by route and status', { route, status: String(status) });
      this.requestCounters.set(key, count);
    }
    return count;
  }
}
