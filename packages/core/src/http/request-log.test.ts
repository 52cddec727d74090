import assert from 'node:assert/strict';
import { RecordingLogger } from '../testing/recording-logger';
import type { MetricLabels as Labels, Metrics } from '../ports/metrics';
import { RequestLog } from './request-log';

/** Counts what is incremented, as `name{label=value,…}` → total. */
class CountingMetrics implements Metrics {
  readonly counts = new Map<string, number>();
  readonly contentType = 'text/plain';
  increment(name: string, help: string, labels: Labels = {}, by = 1): void {
    this.counter(name, help, labels)(by);
  }
  counter(name: string, _help: string, labels: Labels = {}): (by?: number) => void {
    const key = `${name}{${Object.entries(labels).map(([label, value]) => `${label}=${value}`).join(',')}}`;
    return (by = 1) => this.counts.set(key, (this.counts.get(key) ?? 0) + by);
  }
  gauge(): void {}
  async render(): Promise<string> {
    return '';
  }
}

describe('RequestLog', () => {
  it('logs one line per request and counts requests by route and status', async () => {
    const logger = new RecordingLogger();
    const metrics = new CountingMetrics();
    const log = new RequestLog(logger, metrics);
    const request = { requestId: 'r1', method: 'GET', route: 'GET /v1/runnables', status: 200, durationMs: 1.23456, accountId: 'acct-a' };
    log.onRequest(request);
    log.onRequest({ ...request, requestId: 'r2' });
    log.onRequest({ ...request, requestId: 'r3', route: 'GET /healthz', accountId: undefined });
    log.onRequest({ ...request, requestId: 'r4', status: 500, error: new Error('boom') });

    assert.deepEqual(logger.lines[0], {
      level: 'info',
      fields: { requestId: 'r1', method: 'GET', route: 'GET /v1/runnables', status: 200, accountId: 'acct-a', durationMs: 1.23 },
      message: 'request',
    });
    assert.equal(logger.lines[3]!.level, 'error');
    assert.deepEqual((logger.lines[3]!.fields.err as { message: string }).message, 'boom');
    assert.deepEqual(Object.fromEntries(metrics.counts), {
      'runloom_http_requests_total{route=GET /v1/runnables,status=200}': 2,
      'runloom_http_requests_total{route=GET /healthz,status=200}': 1,
      'runloom_http_requests_total{route=GET /v1/runnables,status=500}': 1,
    });
  });
});
