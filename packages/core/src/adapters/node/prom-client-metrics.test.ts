import assert from 'node:assert/strict';
import { PromClientMetrics } from './prom-client-metrics';

describe('PromClientMetrics', () => {
  it('renders counters and collected gauges in the Prometheus text format, under their own names', async () => {
    const metrics = new PromClientMetrics();
    const count = metrics.counter('runloom_http_requests_total', 'HTTP requests by route and status', { route: 'GET /v1/runnables', status: '200' });
    count();
    count();
    metrics.increment('runloom_http_requests_total', 'HTTP requests by route and status', { route: 'GET "quoted"\\path', status: '500' });
    metrics.gauge('runloom_runs', 'Runs by status', async () => [{ labels: { status: 'queued' }, value: 3 }]);
    metrics.gauge('runloom_open_streams', 'Response bodies being streamed', async () => [{ labels: {}, value: 0 }]);
    const text = await metrics.render();
    assert.match(text, /^# HELP runloom_http_requests_total HTTP requests by route and status$/m);
    assert.match(text, /^# TYPE runloom_http_requests_total counter$/m);
    assert.match(text, /^runloom_http_requests_total\{route="GET \/v1\/runnables",status="200"\} 2$/m);
    assert.match(text, /^runloom_http_requests_total\{route="GET \\"quoted\\"\\\\path",status="500"\} 1$/m);
    assert.match(text, /^# TYPE runloom_runs gauge$/m);
    assert.match(text, /^runloom_runs\{status="queued"\} 3$/m);
    assert.match(text, /^runloom_open_streams 0$/m);
    assert.match(metrics.contentType, /^text\/plain; version=0\.0\.4/);
  });

  it('keeps each instance apart: two registries never share a counter', async () => {
    const [a, b] = [new PromClientMetrics(), new PromClientMetrics()];
    a.increment('runloom_runs_finished_total', 'Runs that reached a final status', { status: 'succeeded' });
    b.increment('runloom_runs_finished_total', 'Runs that reached a final status', { status: 'succeeded' });
    assert.match(await a.render(), /^runloom_runs_finished_total\{status="succeeded"\} 1$/m);
  });
});
