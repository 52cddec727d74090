import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { CALLBACK_DELIVERY_JOB, CallbackDispatcher, Database, DomainError, JobQueue, RunRepository, SecretBox, type RunCallback, type RunCompletedEvent, type RunRecord } from '../packages/core/src/index';
import { ManualClock } from '../packages/core/src/testing/manual-clock';
import { insertRunRecord } from './fixtures/run-records';
import { CallbackSink } from './support/callback-sink';
import { startTestRunloom, type TestRunloom } from './support/harness';
import { getRun, jsonInit, waitForRun } from './support/runs';
import { waitUntil } from './support/wait';

/**
 * Backoffs pass on a ManualClock. The receiver timeout is the HTTP client's, in real time: short
 * for the test that waits it out, long enough that a loaded machine's first delivery is not cut off.
 */
const FAST_CALLBACKS = { allowPrivateNetwork: true, callbackInitialBackoffMs: 50, callbackMaxAttempts: 3, callbackTimeoutMs: 1000 };

async function webhookSecret(t: TestRunloom, account = 'acct-a'): Promise<string> {
  const response = await t.request('/v1/webhook-secret', { account });
  assert.equal(response.status, 200);
  return ((await response.json()) as { secret: string }).secret;
}

/** A finished run with a pending callback to `url`, written as the run engine would, then scheduled. */
async function finishRunWithCallback(t: TestRunloom, url: string, options: { headers?: Record<string, string>; run?: Partial<RunRecord> } = {}): Promise<RunRecord> {
  const secretBox = await t.runloom.container.getAsync<SecretBox>(SecretBox);
  const run = await insertRunRecord(t.runloom, {
    callback: CallbackDispatcher.pending(url),
    sealed_callback_headers: options.headers ? await secretBox.seal(JSON.stringify(options.headers)) : null,
    ...options.run,
  });
  await (await dispatcher(t)).schedule(run);
  return run;
}

function dispatcher(t: TestRunloom): Promise<CallbackDispatcher> {
  return t.runloom.container.getAsync(CallbackDispatcher);
}

async function callbackOf(t: TestRunloom, runId: string): Promise<RunCallback> {
  return (await getRun(t, runId)).callback as RunCallback;
}

/** Polls `GET /v1/run/{id}` until the callback leaves `pending`. */
async function settledCallback(t: TestRunloom, runId: string): Promise<RunCallback> {
  let callback = await callbackOf(t, runId);
  await waitUntil(async () => (callback = await callbackOf(t, runId)).status !== 'pending', `the callback of run ${runId} to settle`);
  return callback;
}

/** Waits for the next retry's timer (not the queue's intervals), checks its backoff, and advances past it. */
async function retryAfter(clock: ManualClock, expectedMs: number, jitter = 0.2): Promise<number> {
  const { delayMs } = await clock.timerSet();
  assert.ok(delayMs >= expectedMs * (1 - jitter) && delayMs <= expectedMs * (1 + jitter), `backoff ${delayMs} ms, expected ${expectedMs} ms ± ${jitter * 100}%`);
  await clock.advance(delayMs);
  return delayMs;
}

/** No callback job is queued or running: nothing is left to send later. */
function queueIdle(t: TestRunloom): Promise<void> {
  const queue = t.runloom.container.get<JobQueue>(JobQueue);
  return waitUntil(async () => (await queue.depth()) === 0, 'the job queue to be idle');
}

describe('run callbacks', function () {
  this.timeout(20_000);
  const clock = new ManualClock();
  let t: TestRunloom;
  let sink: CallbackSink;

  before(async () => {
    t = await startTestRunloom({ ...FAST_CALLBACKS, clock });
  });
  after(async () => {
    await t?.close();
  });
  beforeEach(async () => {
    sink = await CallbackSink.start(() => clock.now().getTime());
  });
  afterEach(async () => {
    await sink.close();
    // What a test left pending (a hung attempt cut off by the close) runs out its retries, so no
    // retry timer of one test is taken for the next test's.
    await clock.advanceUntil(queueIdle(t));
  });

  it('POSTs a Standard Webhooks signed run.completed body that the standardwebhooks verifier accepts, with the callback_headers', async () => {
    const run = await finishRunWithCallback(t, sink.url, { headers: { Authorization: 'Bearer callback-token-123', 'X-Tenant': 'blue' } });
    const [received] = await sink.waitFor(1);
    assert.equal(received!.headers['content-type'], 'application/json');
    assert.equal(received!.headers.authorization, 'Bearer callback-token-123');
    assert.equal(received!.headers['x-tenant'], 'blue');
    assert.equal(received!.headers['webhook-id'], `msg_${run.id}`);
    assert.match(received!.headers['webhook-signature']!, /^v1,[A-Za-z0-9+/]+={0,2}$/);
    assert.equal(Number(received!.headers['webhook-timestamp']), Math.floor(clock.now().getTime() / 1000));

    const payload = new Webhook(await webhookSecret(t)).verify(received!.body, received!.headers);
    assert.deepEqual(payload, {
      type: 'run.completed',
      timestamp: run.completed_at,
      data: { id: run.id, runnable_id: run.runnable_id, status: 'succeeded', outputs: run.outputs, error: null, completed_at: run.completed_at },
    });
    // Signed with this account's secret, not any other.
    assert.throws(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(received!.body, received!.headers));

    assert.deepEqual(await settledCallback(t, run.id), { url: sink.url, status: 'delivered', attempts: 1, last_status_code: 200 });
    const view = JSON.stringify(await getRun(t, run.id));
    assert.doesNotMatch(view, /callback-token-123/, 'callback header values are never echoed');
  });

  it('carries a failed run’s error in the body', async () => {
    const error = { code: 'model_error', message: 'the provider answered 500' };
    const run = await finishRunWithCallback(t, sink.url, { run: { status: 'failed', outputs: [], error } });
    const [received] = await sink.waitFor(1);
    const payload = new Webhook(await webhookSecret(t)).verify(received!.body, received!.headers) as RunCompletedEvent;
    assert.deepEqual([payload.data.status, payload.data.error, payload.data.outputs], ['failed', error, []]);
    assert.equal((await settledCallback(t, run.id)).status, 'delivered');
  });

  it('retries a non-2xx answer with doubling backoff, the same webhook-id and a fresh signature each time, until a 2xx', async () => {
    sink.answer = (n) => (n <= 2 ? 500 : 204);
    const run = await finishRunWithCallback(t, sink.url);
    await sink.waitFor(1);
    const first = await retryAfter(clock, 50);
    await sink.waitFor(2);
    const second = await retryAfter(clock, 100);
    const attempts = await sink.waitFor(3);
    assert.deepEqual(await settledCallback(t, run.id), { url: sink.url, status: 'delivered', attempts: 3, last_status_code: 204 });
    const secret = await webhookSecret(t);
    for (const attempt of attempts) {
      assert.equal(attempt.headers['webhook-id'], `msg_${run.id}`);
      new Webhook(secret).verify(attempt.body, attempt.headers);
    }
    assert.equal(new Set(attempts.map((attempt) => attempt.body)).size, 1, 'every attempt carries the same body');
    // Each attempt went out when its backoff (50 ms, then 100 ms, ±20%) had passed, not before.
    assert.deepEqual([attempts[1]!.at - attempts[0]!.at, attempts[2]!.at - attempts[1]!.at], [first, second]);
  });

  it('shows the pending state with its attempts and last status code between attempts', async () => {
    sink.answer = (n) => (n === 1 ? 502 : 'hang');
    const run = await finishRunWithCallback(t, sink.url);
    await sink.waitFor(1);
    await retryAfter(clock, 50);
    await sink.waitFor(2);
    assert.deepEqual(await callbackOf(t, run.id), { url: sink.url, status: 'pending', attempts: 1, last_status_code: 502 });
  });

  it('retries when the receiver does not answer within the timeout', async () => {
    sink.answer = (n) => (n === 1 ? 'hang' : 200);
    const run = await finishRunWithCallback(t, sink.url);
    await sink.waitFor(1);
    // The retry is scheduled only once the client has given up on the first attempt, unanswered.
    await clock.timerSet();
    assert.deepEqual(await callbackOf(t, run.id), { url: sink.url, status: 'pending', attempts: 1, last_status_code: null });
    await waitUntil(() => sink.log.includes('closed 1'), 'the first attempt’s connection to close');
    await retryAfter(clock, 50);
    await sink.waitFor(2);
    assert.deepEqual(sink.log, ['request 1', 'closed 1', 'request 2']);
    assert.deepEqual(await settledCallback(t, run.id), { url: sink.url, status: 'delivered', attempts: 2, last_status_code: 200 });
  });

  it('counts a redirect as a failed attempt and does not follow it', async () => {
    sink.answer = (n) => (n === 1 ? 307 : 200);
    const run = await finishRunWithCallback(t, sink.url);
    await sink.waitFor(1);
    await retryAfter(clock, 50);
    const received = await sink.waitFor(2);
    assert.deepEqual(
      received.map((request) => request.headers['webhook-id']),
      [`msg_${run.id}`, `msg_${run.id}`],
    );
    assert.deepEqual(await settledCallback(t, run.id), { url: sink.url, status: 'delivered', attempts: 2, last_status_code: 200 });
  });

  it('marks the callback failed after callbackMaxAttempts and sends no more', async () => {
    sink.answer = () => 503;
    const run = await finishRunWithCallback(t, sink.url);
    await sink.waitFor(1);
    await retryAfter(clock, 50);
    await sink.waitFor(2);
    await retryAfter(clock, 100);
    await sink.waitFor(3);
    assert.deepEqual(await settledCallback(t, run.id), { url: sink.url, status: 'failed', attempts: 3, last_status_code: 503 });
    // Nothing is left to send it again: its delivery job is gone, and no retry timer is set.
    await queueIdle(t);
    const database = t.runloom.container.get<Database>(Database);
    assert.deepEqual(await database.find('jobs', { where: { kind: CALLBACK_DELIVERY_JOB, key: run.id } }), []);
    assert.deepEqual(clock.pending.filter((timer) => !timer.interval), []);
    assert.equal(sink.received.length, 3);
  });

  it('delivers once per run however often it is scheduled', async () => {
    const run = await finishRunWithCallback(t, sink.url);
    const callbacks = await dispatcher(t);
    await Promise.all([callbacks.schedule(run), callbacks.schedule(run)]);
    await sink.waitFor(1);
    assert.equal((await settledCallback(t, run.id)).status, 'delivered');
    // Scheduled again after delivery (a repair after a crash, say): nothing more is sent.
    await callbacks.schedule((await t.runloom.container.get(RunRepository).get('acct-a', run.id))!);
    await callbacks.schedule(run);
    // The job the stale `run` queued has run and found the callback delivered.
    await queueIdle(t);
    assert.equal(sink.received.length, 1);
  });

  it('does not let callback_headers replace the signature, id, timestamp or content type', async () => {
    const run = await finishRunWithCallback(t, sink.url, {
      headers: { 'Webhook-Signature': 'v1,forged', 'webhook-id': 'msg_other', 'Content-Type': 'text/plain', 'x-kept': 'yes' },
    });
    const [received] = await sink.waitFor(1);
    assert.equal(received!.headers['webhook-id'], `msg_${run.id}`);
    assert.equal(received!.headers['content-type'], 'application/json');
    assert.equal(received!.headers['x-kept'], 'yes');
    new Webhook(await webhookSecret(t)).verify(received!.body, received!.headers);
  });

  it('signs with the rotated secret after POST /v1/webhook-secret/rotate', async () => {
    const rotated = await t.request('/v1/webhook-secret/rotate', { method: 'POST' });
    const { secret } = (await rotated.json()) as { secret: string };
    await finishRunWithCallback(t, sink.url);
    const [received] = await sink.waitFor(1);
    new Webhook(secret).verify(received!.body, received!.headers);
  });

  it('calls back when a run submitted over HTTP with callback_url ends', async () => {
    // No provider is configured for the account, so the run fails: its callback still goes out.
    const created = await t.request(
      '/v1/runnables',
      jsonInit('POST', {
        name: 'callback e2e',
        config_content_parsed: { name: 'callback e2e', type: 'prompt', prompt: { messages: [{ role: 'user', content: 'hi' }] }, llms: [{ name: 'm', provider: 'openai', model: 'gpt-4o' }] },
      }),
    );
    assert.equal(created.status, 201, await created.clone().text());
    const runnable = (await created.json()) as { id: string };
    const submitted = await t.request(`/v1/runnable/${runnable.id}/runs`, jsonInit('POST', { callback_url: sink.url, callback_headers: { 'x-run-secret': 's3cr3t' } }));
    assert.equal(submitted.status, 202, await submitted.clone().text());
    const { id } = (await submitted.json()) as { id: string };
    const [received] = await sink.waitFor(1, 10_000);
    assert.equal(received!.headers['x-run-secret'], 's3cr3t');
    const payload = new Webhook(await webhookSecret(t)).verify(received!.body, received!.headers) as RunCompletedEvent;
    const run = await waitForRun(t, id);
    assert.deepEqual(payload.data, { id, runnable_id: runnable.id, status: run.status, outputs: run.outputs, error: run.error, completed_at: run.completed_at });
    assert.deepEqual(await settledCallback(t, id), { url: sink.url, status: 'delivered', attempts: 1, last_status_code: 200 });
  });

  it('keeps a pending delivery across a restart and delivers it afterwards', async () => {
    const durableClock = new ManualClock();
    const durable = await startTestRunloom({ ...FAST_CALLBACKS, callbackInitialBackoffMs: 1500, clock: durableClock });
    try {
      sink.answer = (n) => (n === 1 ? 500 : 200);
      const run = await finishRunWithCallback(durable, sink.url);
      await sink.waitFor(1);
      // The retry is stored (its timer set) before the restart, and due only after it.
      await durableClock.timerSet();
      assert.deepEqual(await callbackOf(durable, run.id), { url: sink.url, status: 'pending', attempts: 1, last_status_code: 500 });

      await durable.restart();
      assert.equal(sink.received.length, 1);
      // Past the backoff (1500 ms + 20%), the restarted queue's poll finds the retry due.
      await durableClock.advance(2000);
      const [, second] = await sink.waitFor(2, 10_000);
      assert.equal(second!.headers['webhook-id'], `msg_${run.id}`);
      new Webhook(await webhookSecret(durable)).verify(second!.body, second!.headers);
      assert.deepEqual(await settledCallback(durable, run.id), { url: sink.url, status: 'delivered', attempts: 2, last_status_code: 200 });
    } finally {
      await durable.close();
    }
  });
});

describe('run callbacks without --allow-private-network', function () {
  this.timeout(20_000);
  let t: TestRunloom;
  let sink: CallbackSink;

  before(async () => {
    t = await startTestRunloom({ callbackInitialBackoffMs: 50, callbackMaxAttempts: 3 });
    sink = await CallbackSink.start();
  });
  after(async () => {
    await sink?.close();
    await t?.close();
  });

  async function refusal(url: string): Promise<string> {
    const error = await (await dispatcher(t)).validateCallbackUrl(url).then(
      () => assert.fail(`${url} was accepted`),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof DomainError && error.code === 'VALIDATION_FAILED', `${url}: ${String(error)}`);
    return error.message;
  }

  it('refuses at submission callback URLs that are or resolve to loopback, private, link-local, CGNAT or metadata addresses', async () => {
    for (const url of [
      sink.url,
      'http://localhost:8080/hook',
      'http://[::1]/hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://169.254.169.254/latest/meta-data/',
      'http://[fd00:ec2::254]/',
      'http://10.0.0.8/hook',
      'https://192.168.1.20/hook',
      'http://100.64.1.1/hook',
      'http://0.0.0.0:9/hook',
    ]) {
      assert.match(await refusal(url), /callback_url is refused: .*--allow-private-network/, url);
    }
    assert.match(await refusal('http://localhost:8080/hook'), /localhost resolves to .* loopback address/);
    assert.equal(sink.connections, 0);
  });

  it('refuses at submission URLs that are not http(s) or carry credentials, and accepts a public address without contacting it', async () => {
    assert.match(await refusal('ftp://example.com/x'), /http or https/);
    assert.match(await refusal('not a url'), /absolute http or https URL/);
    assert.match(await refusal('https://user:pw@example.com/hook'), /credentials/);
    await (await dispatcher(t)).validateCallbackUrl('https://93.184.215.14/hook');
  });

  it('answers 400 over HTTP for a loopback callback_url', async () => {
    const created = await t.request(
      '/v1/runnables',
      jsonInit('POST', { name: 'guarded', config_content_parsed: { name: 'guarded', type: 'prompt', prompt: { messages: [{ role: 'user', content: 'hi' }] }, llms: [{ name: 'm', provider: 'openai', model: 'gpt-4o' }] } }),
    );
    const runnable = (await created.json()) as { id: string };
    const response = await t.request(`/v1/runnable/${runnable.id}/runs`, jsonInit('POST', { callback_url: sink.url }));
    assert.equal(response.status, 400, await response.clone().text());
    assert.match(((await response.json()) as { error: string }).error, /allow-private-network/);
    assert.equal(sink.connections, 0);
  });

  it('fails a delivery whose destination is refused when it is sent, without connecting or retrying', async () => {
    // Accepted earlier (say, the name resolved elsewhere then), loopback now.
    const run = await finishRunWithCallback(t, sink.url);
    assert.deepEqual(await settledCallback(t, run.id), { url: sink.url, status: 'failed', attempts: 1, last_status_code: null });
    assert.equal(sink.connections, 0);
  });
});
