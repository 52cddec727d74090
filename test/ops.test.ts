import assert from 'node:assert/strict';
import { JobQueue } from '../packages/core/src/index';
import { startTestRunloom, type TestRunloom } from './support/harness';

describe('health, readiness and metrics', () => {
  let app: TestRunloom;

  before(async () => {
    app = await startTestRunloom();
  });

  after(async () => {
    await app.close();
  });

  it('answers /healthz without a token', async () => {
    const response = await app.runloom.handle(new Request('http://runloom.test/healthz'));
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { status: 'ok' });
  });

  it('answers /readyz 200 while the store answers and the queue runs, 503 naming the check once the queue stops', async () => {
    const ready = await app.runloom.handle(new Request('http://runloom.test/readyz'));
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { status: 'ready', checks: { store: true, queue: true } });

    await app.runloom.container.get<JobQueue>(JobQueue).stop();
    const stopped = await app.runloom.handle(new Request('http://runloom.test/readyz'));
    assert.equal(stopped.status, 503);
    assert.deepEqual(await stopped.json(), { status: 'not_ready', checks: { store: true, queue: false } });
  });

  it('serves /metrics only with a token, in the Prometheus text format', async () => {
    assert.equal((await app.runloom.handle(new Request('http://runloom.test/metrics'))).status, 401);
    const response = await app.request('/metrics');
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain/);
    assert.match(await response.text(), /^# TYPE runloom_http_requests_total counter$/m);
  });
});
