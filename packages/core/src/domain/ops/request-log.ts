import type { Logger } from '../../ports/logger';
import type { RequestObserver } from '../../http/router';
import type { MetricsRegistry } from './metrics';

/** One structured log line and one metric sample per request; never bodies, tokens or secrets. */
export class RequestLog implements RequestObserver {
  constructor(
    private readonly logger: Logger,
    private readonly metrics: MetricsRegistry,
  ) {}

  onRequest(entry: Parameters<RequestObserver['onRequest']>[0]): void {
    const { error, durationMs, ...fields } = entry;
    const line = { ...fields, durationMs: Math.round(durationMs * 100) / 100 };
    if (error !== undefined) {
      this.logger.error({ ...line, err: error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : String(error) }, 'request failed');
    } else {
      this.logger.info(line, 'request');
    }
    this.metrics.increment('runloom_http_requests_total', 'HTTP requests by route and status', {
      route: entry.route,
      status: String(entry.status),
    });
  }
}
