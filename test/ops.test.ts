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

  it('answers /metrics 403 saying how to enable it when no metrics token is configured, to an account token too', async () => {
    for (const response of [await app.runloom.handle(new Request('http://runloom.test/metrics')), await app.request('/metrics')]) {
      assert.equal(response.status, 403);
      const body = (await response.json()) as { error: string };
      assert.match(body.error, /--metrics-token/);
      assert.match(body.error, /RUNLOOM_METRICS_TOKEN/);
    }
  });
});

describe('/metrics is for operators (--metrics-token)', () => {
  const METRICS_TOKEN = 'operators-only-3f9c2a';
  let app: TestRunloom;

  before(async () => {
    app = await startTestRunloom({ metricsToken: METRICS_TOKEN });
  });

  after(async () => {
    await app.close();
  });

  const scrape = (authorization?: string): Promise<Response> =>
    app.runloom.handle(new Request('http://runloom.test/metrics', { headers: authorization === undefined ? {} : { authorization } }));

  it('serves the Prometheus text format to the bearer of the metrics token, the scheme in any case', async () => {
    await app.runloom.handle(new Request('http://runloom.test/healthz'));
    for (const authorization of [`Bearer ${METRICS_TOKEN}`, `bearer ${METRICS_TOKEN}`]) {
      const response = await scrape(authorization);
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /^text\/plain/);
      assert.match(await response.text(), /^# TYPE runloom_http_requests_total counter$/m);
    }
  });

  it("refuses an account's valid access token with 401: the figures span every account", async () => {
    const token = await app.token('acct-a');
    assert.equal((await app.request('/v1/runnables')).status, 200, 'the token itself is valid');
    const response = await scrape(`Bearer ${token}`);
    assert.equal(response.status, 401);
    assert.match(((await response.json()) as { error: string }).error, /metrics token/);
    assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer realm="runloom-metrics"/);
  });

  it('refuses no credential, another scheme, a wrong token and a prefix of the right one with 401', async () => {
    const basic = `Basic ${Buffer.from(`x:${METRICS_TOKEN}`).toString('base64')}`;
    for (const authorization of [undefined, basic, 'Bearer', 'Bearer wrong-token', `Bearer ${METRICS_TOKEN.slice(0, -1)}`, `Bearer ${METRICS_TOKEN}x`]) {
      const response = await scrape(authorization);
      assert.equal(response.status, 401, String(authorization));
      assert.ok(!(await response.text()).includes(METRICS_TOKEN), 'the answer never echoes the token');
    }
  });
});
