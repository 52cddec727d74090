import assert from 'node:assert/strict';
import type { Logger } from '../ports/logger';
import { MemoryMetrics } from '../adapters/memory/memory-metrics';
import { RequestLog } from './request-log';

class RecordingLogger implements Logger {
  readonly lines: Array<{ level: string; fields: Record<string, unknown>; message: string }> = [];
  info(fields: Record<string, unknown>, message: string): void {
    this.lines.push({ level: 'info', fields, message });
  }
  warn(fields: Record<string, unknown>, message: string): void {
    this.lines.push({ level: 'warn', fields, message });
  }
  error(fields: Record<string, unknown>, message: string): void {
    this.lines.push({ level: 'error', fields, message });
  }
}

describe('RequestLog', () => {
  it('logs one line per request and counts requests by route and status', async () => {
    const logger = new RecordingLogger();
    const metrics = new MemoryMetrics();
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
    const samples = (await metrics.render()).split('\n').filter((line) => line.startsWith('runloom_http_requests_total{'));
    assert.deepEqual(samples, [
      'runloom_http_requests_total{route="GET /v1/runnables",status="200"} 2',
      'runloom_http_requests_total{route="GET /healthz",status="200"} 1',
      'runloom_http_requests_total{route="GET /v1/runnables",status="500"} 1',
    ]);
  });
});
