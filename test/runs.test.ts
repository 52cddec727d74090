import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ManualClock } from '../packages/core/src/testing/manual-clock';
import { startFakeVendor, type FakeVendorServer } from '../packages/core/src/testing/fake-vendors';
import { startTestRunloom, type TestRunloom } from './support/harness';
import { waitUntil } from './support/wait';
import {
  createRunnable,
  getRun,
  jsonInit,
  promptConfig,
  submit,
  submitAsync,
  uploadResource,
  useFakeVendor,
  waitForRun,
  type Json,
} from './support/runs';

/** A 1×1 transparent PNG. */
const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
const PNG = new Uint8Array(Buffer.from(PNG_BASE64, 'base64'));
const MISSING_ID = '0190a0b0-0000-7000-8000-0000000000ff';
/** The operators' credential for /metrics. */
const METRICS_TOKEN = 'metrics-token-for-tests';

describe('runs over HTTP', function () {
  this.timeout(20_000);
  let t: TestRunloom;
  let openai: FakeVendorServer;
  let anthropic: FakeVendorServer;

  before(async () => {
    [openai, anthropic] = await Promise.all([startFakeVendor('openai'), startFakeVendor('anthropic')]);
    // Loopback HTTP tools and callbacks in these tests; the fakes are on loopback too.
    t = await startTestRunloom({ allowPrivateNetwork: true, runConcurrencyPerAccount: 2, metricsToken: METRICS_TOKEN });
    await useFakeVendor(t, openai);
    await useFakeVendor(t, anthropic);
    await useFakeVendor(t, openai, 'acct-b');
  });
  after(async () => {
    await t?.close();
    await Promise.all([openai?.close(), anthropic?.close()]);
  });
  beforeEach(() => {
    openai.reset();
    anthropic.reset();
  });

  describe('prompt runs', () => {
    for (const provider of ['openai', 'anthropic'] as const) {
      it(`runs async on ${provider}: 202 {id}, then queued → running → succeeded with the text output and usage`, async () => {
        const fake = provider === 'openai' ? openai : anthropic;
        fake.reply({ type: 'text', chunks: ['Bonjour', ' le monde'], usage: { input: 21, output: 4 } });
        const runnable = await createRunnable(t, promptConfig(fake, { system: 'Be brief.', messages: [{ role: 'user', content: 'Greet the world' }] }));
        const response = await submit(t, runnable.id);
        assert.equal(response.status, 202);
        const accepted = (await response.json()) as Json;
        assert.deepEqual(Object.keys(accepted), ['id']);
        const run = await waitForRun(t, accepted.id);
        assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
        assert.deepEqual(run.outputs, [{ name: 'output', mime_type: 'text/plain', text_value: 'Bonjour le monde' }]);
        assert.deepEqual(run.usage, { input_tokens: 21, output_tokens: 4 });
        assert.equal(run.runnable_id, runnable.id);
        assert.equal(run.runnable_sha256, runnable.config_content_sha256);
        assert.equal(run.error, null);
        assert.ok(run.started_at && run.completed_at && run.started_at <= run.completed_at);
        const request = await fake.waitForRequests(1);
        assert.equal(request.body.model, fake.model);
        assert.match(JSON.stringify(request.body), /Be brief\./);
        assert.match(JSON.stringify(request.body), /Greet the world/);
      });

      it(`runs sync on ${provider}: 200 with the finished record`, async () => {
        const fake = provider === 'openai' ? openai : anthropic;
        fake.reply({ type: 'text', chunks: ['sync ', 'answer'] });
        const runnable = await createRunnable(t, promptConfig(fake));
        const response = await submit(t, runnable.id, {}, { mode: 'sync' });
        assert.equal(response.status, 200);
        const run = (await response.json()) as Json;
        assert.equal(run.status, 'succeeded');
        assert.equal(run.outputs[0].text_value, 'sync answer');
        assert.deepEqual(run, await getRun(t, run.id));
      });
    }

    it('answers the run record with exactly the contract fields, and never the callback headers', async () => {
      const runnable = await createRunnable(t, promptConfig(openai));
      const response = await submit(
        t,
        runnable.id,
        { callback_url: 'http://127.0.0.1:9/hook', callback_headers: { authorization: 'Bearer very-secret-callback-token' }, timeout_seconds: 30 },
        { mode: 'sync' },
      );
      const text = await response.text();
      assert.equal(response.status, 200, text);
      assert.doesNotMatch(text, /very-secret-callback-token/);
      const run = JSON.parse(text) as Json;
      assert.deepEqual(Object.keys(run), [
        'id', 'account_id', 'runnable_id', 'runnable_sha256', 'status', 'created_at', 'started_at', 'completed_at', 'timeout_seconds',
        'telemetry_strategy', 'telemetry_enabled', 'resources', 'outputs', 'error', 'usage', 'callback', 'trace',
      ]);
      assert.equal(run.account_id, 'acct-a');
      assert.equal(run.timeout_seconds, 30);
      assert.equal(run.telemetry_strategy, 'default');
      assert.equal(run.callback.url, 'http://127.0.0.1:9/hook');
      assert.doesNotMatch(JSON.stringify(await getRun(t, run.id)), /very-secret-callback-token/);
    });

    it('fills placeholders from text, JSON and image resources; the image reaches the vendor as an image part', async () => {
      const note = await uploadResource(t, 'The meeting moved to Tuesday.', 'note.txt', 'text/plain');
      const order = await uploadResource(t, JSON.stringify({ item: 'lamp', quantity: 2 }), 'order.json', 'application/json');
      const photo = await uploadResource(t, PNG, 'photo.png', 'image/png');
      const runnable = await createRunnable(
        t,
        promptConfig(openai, { system: 'Notes: {{note}}', messages: [{ role: 'user', content: 'Order {{order}} and this photo: {{photo}} — describe.' }] }, {
          inputs: [
            { name: 'note', mime_types: ['text/plain'] },
            { name: 'order', mime_types: ['application/json'] },
            { name: 'photo', mime_types: ['image/*'] },
          ],
        }),
      );
      const run = await waitForRun(
        t,
        await submitAsync(t, runnable.id, {
          resources: [
            { name: 'note', resource: note.id },
            { name: 'order', resource: { id: order.id } },
            { name: 'photo', resource: { id: photo.id } },
          ],
        }),
      );
      assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
      assert.deepEqual(
        run.resources.map((entry: Json) => [entry.name, entry.resource.id, entry.resource.mime_type]),
        [
          ['note', note.id, 'text/plain'],
          ['order', order.id, 'application/json'],
          ['photo', photo.id, 'image/png'],
        ],
      );
      const request = await openai.waitForRequests(1);
      const body = JSON.stringify(request.body);
      assert.match(body, /Notes: The meeting moved to Tuesday\./);
      assert.match(body, /Order \{\\"item\\":\\"lamp\\",\\"quantity\\":2\} and this photo: /);
      assert.doesNotMatch(body, /\{\{photo\}\}/);
      assert.deepEqual(openai.protocol.receivedFiles(request), [{ mediaType: 'image/png', base64: PNG_BASE64 }]);
    });

    it('answers structured output as object_value outputs named by schemas', async () => {
      openai.reply({ type: 'json', value: { city: 'Paris', population: 2102650 } });
      const runnable = await createRunnable(
        t,
        promptConfig(openai, undefined, {
          schemas: { capital: { type: 'object', properties: { city: { type: 'string' }, population: { type: 'integer' } }, required: ['city', 'population'] } },
        }),
      );
      const response = await submit(t, runnable.id, {}, { mode: 'sync' });
      const run = (await response.json()) as Json;
      assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
      assert.deepEqual(run.outputs, [{ name: 'capital', mime_type: 'application/json', object_value: { city: 'Paris', population: 2102650 } }]);
      const request = await openai.waitForRequests(1);
      assert.equal(request.body.response_format?.type, 'json_schema');
    });

    it('passes llms[].params and picks the is_default model', async () => {
      const runnable = await createRunnable(t, {
        type: 'prompt',
        prompt: { messages: [{ role: 'user', content: 'hi' }] },
        llms: [
          { provider: 'anthropic', model: anthropic.model },
          { provider: 'openai', model: openai.model, is_default: true, params: { temperature: 0.25, max_tokens: 77 } },
        ],
      });
      const run = (await (await submit(t, runnable.id, {}, { mode: 'sync' })).json()) as Json;
      assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
      assert.equal(anthropic.requests.length, 0);
      const request = await openai.waitForRequests(1);
      assert.equal(request.body.temperature, 0.25);
      assert.equal(request.body.max_tokens, 77);
    });

    it('runs the runnable as it is at each submission: an update is run by the next run, a deleted runnable is 404', async () => {
      const runnable = await createRunnable(t, promptConfig(openai, { messages: [{ role: 'user', content: 'First wording' }] }));
      const first = (await (await submit(t, runnable.id, {}, { mode: 'sync' })).json()) as Json;
      assert.equal(first.runnable_sha256, runnable.config_content_sha256);
      const patched = (await (
        await t.request(`/v1/runnable/${runnable.id}`, jsonInit('PATCH', { config_content_parsed: promptConfig(openai, { messages: [{ role: 'user', content: 'Second wording' }] }) }))
      ).json()) as Json;
      assert.notEqual(patched.config_content_sha256, runnable.config_content_sha256);
      const second = (await (await submit(t, runnable.id, {}, { mode: 'sync' })).json()) as Json;
      assert.equal(second.runnable_sha256, patched.config_content_sha256);
      const requests = await openai.waitForRequests(2);
      assert.match(JSON.stringify(requests.body), /Second wording/);
      assert.equal((await t.request(`/v1/runnable/${runnable.id}`, { method: 'DELETE' })).status, 200);
      assert.equal((await submit(t, runnable.id, {}, { mode: 'sync' })).status, 404);
    });
  });

  describe('flows', () => {
    it('runs independent steps at the same time: both requests are at the vendor together', async () => {
      openai.reply({ type: 'hang' }, { type: 'hang' });
      const runnable = await createRunnable(t, {
        type: 'flow',
        llms: [{ provider: 'openai', model: openai.model }],
        steps: [
          { id: 'left', uses: { prompt: { messages: [{ role: 'user', content: 'left' }] } } },
          { id: 'right', uses: { prompt: { messages: [{ role: 'user', content: 'right' }] } } },
          { id: 'join', needs: ['left', 'right'], uses: { transform: 'template', template: '{{steps.left.output}}+{{steps.right.output}}' } },
        ],
      });
      const id = await submitAsync(t, runnable.id);
      const [first, second] = [await openai.waitForRequests(1), await openai.waitForRequests(2)];
      assert.equal(first.completed || second.completed, false);
      const cancelled = await t.request(`/v1/run/${id}/cancel`, { method: 'POST' });
      assert.equal(cancelled.status, 200);
      await Promise.all([first.closed, second.closed]);
      assert.equal((await getRun(t, id)).status, 'cancelled');
    });

    it('substitutes {{steps.ID.output}}, runs another runnable as a step, and answers the output step', async () => {
      openai.reply({ type: 'text', chunks: ['blue'] }, { type: 'text', chunks: ['The sky is blue.'] });
      const shout = await createRunnable(t, promptConfig(openai, { messages: [{ role: 'user', content: 'Make a sentence about {{color}}' }] }, { inputs: [{ name: 'color', type: 'text' }] }));
      const runnable = await createRunnable(t, {
        type: 'flow',
        llms: [{ provider: 'openai', model: openai.model }],
        inputs: [{ name: 'topic', type: 'text', mime_types: ['text/plain'] }],
        steps: [
          { id: 'pick', uses: { prompt: { messages: [{ role: 'user', content: 'Pick a color for {{topic}}' }] } } },
          { id: 'sentence', uses: { runnable: shout.id }, with: { color: '{{steps.pick.output}}' } },
          { id: 'wrap', uses: { transform: 'template', template: '[{{steps.sentence.output}}]' } },
        ],
        output: 'sentence',
      });
      const topic = await uploadResource(t, 'the sky', 'topic.txt', 'text/plain');
      const run = await waitForRun(t, await submitAsync(t, runnable.id, { resources: [{ name: 'topic', resource: topic.id }] }));
      assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
      assert.deepEqual(run.outputs, [{ name: 'output', mime_type: 'text/plain', text_value: 'The sky is blue.' }]);
      assert.match(JSON.stringify(openai.requests[0]!.body), /Pick a color for the sky/);
      assert.match(JSON.stringify(openai.requests[1]!.body), /Make a sentence about blue/);
      assert.equal(run.usage.input_tokens, 24);
    });

    it('fails the run naming the step that failed', async () => {
      openai.reply({ type: 'error', status: 400, message: 'bad prompt' });
      const runnable = await createRunnable(t, {
        type: 'flow',
        llms: [{ provider: 'openai', model: openai.model }],
        steps: [{ id: 'broken', uses: { prompt: { messages: [{ role: 'user', content: 'x' }] } } }],
      });
      const run = await waitForRun(t, await submitAsync(t, runnable.id));
      assert.equal(run.status, 'failed');
      assert.equal(run.error.code, 'bad_request');
      assert.match(run.error.message, /^step 'broken' failed: /);
    });
  });

  describe('agents', () => {
    let toolServer: http.Server;
    let toolUrl: string;
    const toolRequests: { method: string; url: string; body: string }[] = [];

    before(async () => {
      toolServer = http.createServer((req, res) => {
        let body = '';
        req.on('data', (chunk: Buffer) => (body += chunk.toString()));
        req.on('end', () => {
          toolRequests.push({ method: req.method!, url: req.url!, body });
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ forecast: 'sunny', temperature: 24 }));
        });
      });
      await new Promise<void>((resolve) => toolServer.listen(0, '127.0.0.1', resolve));
      toolUrl = `http://127.0.0.1:${(toolServer.address() as AddressInfo).port}/weather`;
    });
    after(async () => {
      await new Promise((resolve) => toolServer.close(resolve));
    });

    it('loops over a runnable tool and an http tool until the model answers', async () => {
      const summarize = await createRunnable(t, promptConfig(openai, { messages: [{ role: 'user', content: 'Summarize: {{text}}' }] }, { inputs: [{ name: 'text', type: 'text' }] }));
      openai.reply(
        { type: 'tool-call', toolName: 'summarize', input: { text: 'a long story about Lyon' } },
        { type: 'text', chunks: ['A story about Lyon.'] },
        { type: 'tool-call', toolName: 'weather', input: { city: 'Lyon' } },
        { type: 'text', chunks: ['Lyon: sunny, 24°C.'] },
      );
      const agent = await createRunnable(t, {
        type: 'agent',
        provider: 'openai',
        model: openai.model,
        prompt: { system: 'Use tools.', messages: [{ role: 'user', content: 'Weather in the story city?' }] },
        tools: [
          { type: 'runnable', runnable_id: summarize.id, name: 'summarize' },
          { type: 'http', name: 'weather', method: 'GET', url: toolUrl, parameters: { type: 'object', properties: { city: { type: 'string' } } } },
        ],
        max_steps: 5,
      });
      const run = await waitForRun(t, await submitAsync(t, agent.id));
      assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
      assert.deepEqual(run.outputs, [{ name: 'output', mime_type: 'text/plain', text_value: 'Lyon: sunny, 24°C.' }]);
      assert.equal(openai.requests.length, 4);
      assert.match(JSON.stringify(openai.requests[1]!.body), /Summarize: a long story about Lyon/);
      assert.deepEqual(toolRequests.map((request) => [request.method, request.url]), [['GET', '/weather?city=Lyon']]);
      const last = JSON.stringify(openai.requests[3]!.body.messages);
      assert.match(last, /A story about Lyon\./);
      assert.match(last, /sunny/);
      assert.deepEqual(openai.requests[0]!.body.tools.map((tool: Json) => tool.function.name), ['summarize', 'weather']);
    });

    it('fails a run whose agent asks for a tool type this server does not host', async () => {
      const agent = await createRunnable(t, {
        type: 'agent',
        provider: 'openai',
        model: openai.model,
        prompt: { messages: [{ role: 'user', content: 'read a file' }] },
        tools: [{ type: 'workspace_file_read' }],
      });
      const run = await waitForRun(t, await submitAsync(t, agent.id));
      assert.equal(run.status, 'failed');
      assert.equal(run.error.code, 'tool_unavailable');
      assert.equal(openai.requests.length, 0);
    });

    it('fails when the model is still calling tools after max_steps', async () => {
      openai.reply({ type: 'tool-call', toolName: 'weather', input: {} }, { type: 'tool-call', toolName: 'weather', input: {} });
      const agent = await createRunnable(t, {
        type: 'agent',
        provider: 'openai',
        model: openai.model,
        prompt: { messages: [{ role: 'user', content: 'loop' }] },
        tools: [{ type: 'http', name: 'weather', method: 'POST', url: toolUrl }],
        max_steps: 2,
      });
      const run = await waitForRun(t, await submitAsync(t, agent.id));
      assert.equal(run.status, 'failed');
      assert.equal(run.error.code, 'max_steps_exceeded');
      assert.match(run.error.message, /max_steps \(2\)/);
    });
  });

  describe('timeouts and cancellation', () => {
    it('ends a run past timeout_seconds as timed_out and aborts the model call', async () => {
      const clock = new ManualClock();
      const timed = await startTestRunloom({ allowPrivateNetwork: true, clock });
      try {
        await useFakeVendor(timed, openai);
        openai.reply({ type: 'hang' });
        const runnable = await createRunnable(timed, promptConfig(openai));
        const id = await submitAsync(timed, runnable.id, { timeout_seconds: 1 });
        const request = await openai.waitForRequests(1);
        // The timeout is armed when the run starts, for the full second: time stands still meanwhile.
        assert.equal((await clock.timerSet()).delayMs, 1000);
        await clock.advance(999);
        assert.equal((await getRun(timed, id)).status, 'running');
        await clock.advance(1);
        const run = await waitForRun(timed, id);
        assert.equal(run.status, 'timed_out');
        assert.equal(run.error.code, 'timeout');
        assert.equal(Date.parse(run.completed_at) - Date.parse(run.started_at), 1000);
        await request.closed;
      } finally {
        await timed.close();
      }
    });

    it('stops a run hanging at the vendor when the server closes, after the grace, and resumes it at the next start', async () => {
      const clock = new ManualClock();
      // No callback, a free slot: on this store (not shared) the run is started without a job.
      const stopping = await startTestRunloom({ allowPrivateNetwork: true, clock });
      try {
        await useFakeVendor(stopping, openai);
        openai.reply({ type: 'hang' });
        const runnable = await createRunnable(stopping, promptConfig(openai));
        const id = await submitAsync(stopping, runnable.id);
        const request = await openai.waitForRequests(1);
        await stopping.restart();
        await request.closed;
        const run = await waitForRun(stopping, id);
        assert.equal(run.status, 'succeeded');
        assert.equal(openai.requests.length, 2);
      } finally {
        await stopping.close();
      }
    });

    it('treats timeout_seconds below 1 as no timeout', async () => {
      const runnable = await createRunnable(t, promptConfig(openai));
      const run = (await (await submit(t, runnable.id, { timeout_seconds: 0 }, { mode: 'sync' })).json()) as Json;
      assert.equal(run.status, 'succeeded');
    });

    it('cancels a running run (aborting the model call), a queued one at once, and answers 409 for a finished one', async () => {
      openai.reply({ type: 'hang' }, { type: 'hang' });
      const runnable = await createRunnable(t, promptConfig(openai));
      // Two slots per account: the third run waits queued.
      const running = [await submitAsync(t, runnable.id), await submitAsync(t, runnable.id)];
      await openai.waitForRequests(2);
      const queued = await submitAsync(t, runnable.id);
      // Another account's run, submitted after it, going all the way through: the engine has had the third run's job.
      const other = await createRunnable(t, promptConfig(openai), 'acct-b');
      assert.equal((await waitForRun(t, await submitAsync(t, other.id, {}, 'acct-b'), { account: 'acct-b' })).status, 'succeeded');
      assert.equal((await getRun(t, queued)).status, 'queued');

      const cancelQueued = await t.request(`/v1/run/${queued}/cancel`, { method: 'POST' });
      assert.equal(cancelQueued.status, 200);
      const queuedRun = (await cancelQueued.json()) as Json;
      assert.equal(queuedRun.status, 'cancelled');
      assert.equal(queuedRun.started_at, null);

      const cancelRunning = await t.request(`/v1/run/${running[0]}/cancel`, { method: 'POST' });
      assert.equal(cancelRunning.status, 200);
      assert.equal(((await cancelRunning.json()) as Json).status, 'cancelled');
      await openai.requests[0]!.closed;
      await t.request(`/v1/run/${running[1]}/cancel`, { method: 'POST' });

      const again = await t.request(`/v1/run/${running[0]}/cancel`, { method: 'POST' });
      assert.equal(again.status, 409);
      assert.match(((await again.json()) as Json).error, /cancelled/);
      // The cancelled queued run never reaches the vendor: a run submitted after it, once both slots
      // are free, is the only one that does.
      const after = await waitForRun(t, await submitAsync(t, runnable.id));
      assert.equal(after.status, 'succeeded');
      assert.equal(openai.requests.length, 4);
      assert.equal((await getRun(t, queued)).status, 'cancelled');
    });

    it('keeps an account to its concurrency (runs waiting in line, then parked) while other accounts go ahead', async () => {
      openai.reply({ type: 'hang' }, { type: 'hang' });
      const runnable = await createRunnable(t, promptConfig(openai));
      const hanging = [await submitAsync(t, runnable.id), await submitAsync(t, runnable.id)];
      await openai.waitForRequests(2);
      // Two wait in line with their jobs, the next two are parked without one.
      const waiting: string[] = [];
      for (let index = 0; index < 4; index++) waiting.push(await submitAsync(t, runnable.id));
      const other = await createRunnable(t, promptConfig(openai), 'acct-b');
      const otherRun = await waitForRun(t, await submitAsync(t, other.id, {}, 'acct-b'), { account: 'acct-b' });
      assert.equal(otherRun.status, 'succeeded');
      for (const id of waiting) assert.equal((await getRun(t, id)).status, 'queued');
      assert.equal(openai.requests.length, 3);
      await t.request(`/v1/run/${hanging[0]}/cancel`, { method: 'POST' });
      for (const id of waiting) assert.equal((await waitForRun(t, id)).status, 'succeeded');
      await t.request(`/v1/run/${hanging[1]}/cancel`, { method: 'POST' });
      // Each waiting run reached the vendor once, after a slot of its account came free.
      assert.equal(openai.requests.length, 7);
    });
  });

  describe('providers', () => {
    it('fails a run whose provider is not configured, naming the provider', async () => {
      const runnable = await createRunnable(t, { type: 'prompt', prompt: { messages: [{ role: 'user', content: 'hi' }] }, llms: [{ provider: 'mistral', model: 'mistral-small' }] });
      const run = (await (await submit(t, runnable.id, {}, { mode: 'sync' })).json()) as Json;
      assert.equal(run.status, 'failed');
      assert.equal(run.error.code, 'provider_unavailable');
      assert.match(run.error.message, /mistral/);
    });

    it('fails a run whose provider is disabled, naming the provider', async () => {
      await useFakeVendor(t, anthropic, 'acct-c', false);
      const runnable = await createRunnable(t, promptConfig(anthropic), 'acct-c');
      const run = (await (await submit(t, runnable.id, {}, { mode: 'sync', account: 'acct-c' })).json()) as Json;
      assert.equal(run.status, 'failed');
      assert.equal(run.error.code, 'provider_unavailable');
      assert.match(run.error.message, /anthropic.*disabled/);
      assert.equal(anthropic.requests.length, 0);
    });

    it('backs the provider off on a vendor 429 with retry-after, then retries: the run succeeds', async () => {
      openai.reply({ type: 'error', status: 429, message: 'slow down', retryAfterSeconds: 0 }, { type: 'text', chunks: ['after the wait'] });
      const runnable = await createRunnable(t, promptConfig(openai));
      const run = (await (await submit(t, runnable.id, {}, { mode: 'sync' })).json()) as Json;
      assert.equal(run.status, 'succeeded');
      assert.equal(run.outputs[0].text_value, 'after the wait');
      assert.equal(openai.requests.length, 2);
    });

    it('fails the run with rate_limited when the vendor keeps answering 429', async () => {
      const busy = { type: 'error', status: 429, message: 'still busy', retryAfterSeconds: 0 } as const;
      openai.reply(busy, busy, busy);
      const runnable = await createRunnable(t, promptConfig(openai));
      const run = (await (await submit(t, runnable.id, {}, { mode: 'sync' })).json()) as Json;
      assert.equal(run.status, 'failed');
      assert.match(run.error.message, /429/);
      assert.equal(openai.requests.length, 3);
    });

    it('keeps an account’s runs to the provider’s max_concurrency; the next goes when a call ends', async () => {
      const limited = await t.request('/v1/llm-provider/openai', jsonInit('PUT', { enabled: true, credentials: openai.credentials, max_concurrency: 1 }, 'acct-d'));
      assert.equal(limited.status, 201);
      assert.equal(((await limited.json()) as Json).max_concurrency, 1);
      await useFakeVendor(t, anthropic, 'acct-e');
      openai.reply({ type: 'hang' }, { type: 'text', chunks: ['second'] });
      const runnable = await createRunnable(t, promptConfig(openai), 'acct-d');
      const first = await submitAsync(t, runnable.id, {}, 'acct-d');
      await openai.waitForRequests(1);
      const second = await submitAsync(t, runnable.id, {}, 'acct-d');
      assert.equal((await waitForRun(t, second, { account: 'acct-d', statuses: ['running'] })).status, 'running');
      // A run of another account goes to a vendor and ends meanwhile.
      const other = await createRunnable(t, promptConfig(anthropic), 'acct-e');
      assert.equal(((await (await submit(t, other.id, {}, { mode: 'sync', account: 'acct-e' })).json()) as Json).status, 'succeeded');
      assert.equal(openai.requests.length, 1, 'the second call waits for the first');
      await t.request(`/v1/run/${first}/cancel`, { method: 'POST', account: 'acct-d' });
      assert.equal((await waitForRun(t, second, { account: 'acct-d' })).status, 'succeeded');
      assert.equal(openai.requests.length, 2);
    });
  });

  describe('reading runs', () => {
    it('keeps the runs of a deleted runnable readable, with the configuration they ran', async () => {
      const runnable = await createRunnable(t, promptConfig(openai));
      const id = await submitAsync(t, runnable.id);
      await waitForRun(t, id);
      assert.equal((await t.request(`/v1/runnable/${runnable.id}`, { method: 'DELETE' })).status, 200);
      const run = await getRun(t, id);
      assert.equal(run.status, 'succeeded');
      assert.equal(run.runnable_id, runnable.id);
      const listed = (await (await t.request(`/v1/runs?runnable_id=${runnable.id}`)).json()) as Json[];
      assert.deepEqual(listed.map((entry) => entry.id), [id]);
      assert.equal((await submit(t, runnable.id)).status, 404);
    });

    it('lists runs newest first, filtered by runnable_id and status, with limit and offset', async () => {
      const runnable = await createRunnable(t, promptConfig(openai));
      openai.reply({ type: 'text', chunks: ['ok'] }, { type: 'error', status: 400 }, { type: 'text', chunks: ['ok'] });
      const ids: string[] = [];
      for (let index = 0; index < 3; index++) {
        const id = await submitAsync(t, runnable.id);
        await waitForRun(t, id);
        ids.push(id);
      }
      const all = (await (await t.request(`/v1/runs?runnable_id=${runnable.id}`)).json()) as Json[];
      assert.deepEqual(all.map((run) => run.id), [...ids].reverse());
      const failed = (await (await t.request(`/v1/runs?runnable_id=${runnable.id}&status=failed`)).json()) as Json[];
      assert.deepEqual(failed.map((run) => run.id), [ids[1]]);
      const page = (await (await t.request(`/v1/runs?runnable_id=${runnable.id}&limit=1&offset=1`)).json()) as Json[];
      assert.deepEqual(page.map((run) => run.id), [ids[1]]);
      assert.equal((await t.request('/v1/runs?status=done')).status, 400);
      assert.equal((await t.request('/v1/runs?limit=501')).status, 400);
    });

    it('exposes runs by status and the job queue depth in /metrics', async () => {
      const runnable = await createRunnable(t, promptConfig(openai));
      // A sync answer comes once the run's outcome is stored and counted.
      assert.equal((await submit(t, runnable.id, {}, { mode: 'sync' })).status, 200);
      const metrics = await (await t.request('/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
      const succeeded = /^runloom_runs\{status="succeeded"\} (\d+)$/m.exec(metrics);
      assert.ok(succeeded && Number(succeeded[1]) >= 1, metrics);
      assert.match(metrics, /^runloom_runs\{status="timed_out"\} \d+$/m);
      assert.match(metrics, /^runloom_job_queue_depth \d+$/m);
      assert.match(metrics, /^runloom_runs_finished_total\{status="succeeded"\} \d+$/m);
    });

    it('counts a run executing at the vendor in runloom_job_queue_depth, however it was started', async () => {
      const depth = async () => {
        const metrics = await (await t.request('/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
        return Number(/^runloom_job_queue_depth (\d+)$/m.exec(metrics)?.[1]);
      };
      const idle = await depth();
      openai.reply({ type: 'hang' });
      const runnable = await createRunnable(t, promptConfig(openai));
      const id = await submitAsync(t, runnable.id);
      const request = await openai.waitForRequests(1);
      assert.equal(await depth(), idle + 1);
      assert.equal((await t.request(`/v1/run/${id}/cancel`, { method: 'POST' })).status, 200);
      await waitForRun(t, id);
      await request.closed;
      // The execution lets go of its count as it settles, just after its outcome is stored.
      await waitUntil(async () => (await depth()) === idle, 'the depth back to what it was');
    });

    it('answers 404 for another account’s run on every route, and keeps it out of lists', async () => {
      const runnable = await createRunnable(t, promptConfig(openai));
      const id = await submitAsync(t, runnable.id);
      await waitForRun(t, id);
      assert.equal((await t.request(`/v1/run/${id}`, { account: 'acct-b' })).status, 404);
      assert.equal((await t.request(`/v1/run/${id}/cancel`, { method: 'POST', account: 'acct-b' })).status, 404);
      assert.equal((await submit(t, runnable.id, {}, { account: 'acct-b' })).status, 404);
      const listed = (await (await t.request('/v1/runs', { account: 'acct-b' })).json()) as Json[];
      assert.ok(!listed.some((run) => run.id === id));
      assert.equal((await t.request(`/v1/run/${MISSING_ID}`)).status, 404);
      assert.equal((await t.request(`/v1/run/${MISSING_ID}/cancel`, { method: 'POST' })).status, 404);
    });
  });

  describe('submission checks', () => {
    let runnable: Json;
    let text: Json;
    let image: Json;

    before(async () => {
      runnable = await createRunnable(
        t,
        promptConfig(openai, { messages: [{ role: 'user', content: '{{doc}} {{extra}}' }] }, {
          inputs: [
            { name: 'doc', mime_types: ['text/*'], metadata: { schema: { type: 'object', properties: { lang: { type: 'string', enum: ['en', 'fr'] } }, required: ['lang'] }, required: true } },
            { name: 'extra', mime_types: ['image/*'], required: false },
          ],
        }),
      );
      text = await uploadResource(t, 'hello', 'doc.txt', 'text/plain', { metadata: { lang: 'en' } });
      image = await uploadResource(t, PNG, 'p.png', 'image/png');
    });

    async function expect400(body: Json, pattern: RegExp): Promise<Json> {
      const response = await submit(t, runnable.id, body);
      const answer = (await response.json()) as Json;
      assert.equal(response.status, 400, JSON.stringify(answer));
      assert.ok(Array.isArray(answer.details) && answer.details.length > 0, JSON.stringify(answer));
      assert.match(JSON.stringify(answer.details), pattern);
      return answer;
    }

    it('accepts resources that fit, and an optional placeholder left out', async () => {
      const run = await waitForRun(t, await submitAsync(t, runnable.id, { resources: [{ name: 'doc', resource: text.id }] }));
      assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
    });

    it('refuses an unknown placeholder name', async () => {
      await expect400({ resources: [{ name: 'doc', resource: text.id }, { name: 'nope', resource: text.id }] }, /no placeholder named 'nope'.*doc, extra/);
    });

    it('refuses a missing required placeholder', async () => {
      await expect400({ resources: [{ name: 'extra', resource: image.id }] }, /'doc' is required/);
    });

    it('refuses a MIME type the placeholder does not accept (wildcards respected)', async () => {
      await expect400({ resources: [{ name: 'doc', resource: text.id }, { name: 'extra', resource: text.id }] }, /text\/plain.*'extra' accepts image\/\*/);
    });

    it('refuses metadata that fails the placeholder’s JSON Schema, and missing required metadata', async () => {
      const french = await uploadResource(t, 'salut', 'fr.txt', 'text/plain', { metadata: { lang: 'de' } });
      await expect400({ resources: [{ name: 'doc', resource: french.id }] }, /metadata does not match placeholder 'doc'.*allowed values/);
      const bare = await uploadResource(t, 'bare', 'bare.txt', 'text/plain');
      await expect400({ resources: [{ name: 'doc', resource: bare.id }] }, /requires metadata/);
    });

    it('answers 404 for a resource of another account or one that does not exist', async () => {
      const theirs = await uploadResource(t, 'theirs', 'b.txt', 'text/plain', { account: 'acct-b', metadata: { lang: 'en' } });
      assert.equal((await submit(t, runnable.id, { resources: [{ name: 'doc', resource: theirs.id }] })).status, 404);
      assert.equal((await submit(t, runnable.id, { resources: [{ name: 'doc', resource: MISSING_ID }] })).status, 404);
    });

    it('refuses bad fields and modes with 400, and an unknown runnable with 404', async () => {
      const valid = { resources: [{ name: 'doc', resource: text.id }] };
      assert.equal((await submit(t, runnable.id, valid, { mode: 'foo' })).status, 400);
      await expect400({ ...valid, timeout_seconds: 1.5 }, /timeout_seconds/);
      await expect400({ ...valid, telemetry_strategy: 'always' }, /telemetry_strategy/);
      await expect400({ ...valid, callback_headers: { 'x-a': 5 } }, /callback_headers/);
      await expect400({ ...valid, callback_headers: 'x-a: 5' }, /callback_headers must be an object of strings/);
      await expect400({ ...valid, callback_headers: { 'bad name': 'v' } }, /a header name holds only/);
      await expect400({ ...valid, resources: 'doc' }, /resources/);
      const refused = await submit(t, runnable.id, { ...valid, callback_url: 'ftp://example.com/x' });
      assert.equal(refused.status, 400);
      assert.equal((await submit(t, MISSING_ID, valid)).status, 404);
      const malformed = await t.request(`/v1/runnable/${runnable.id}/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"resources": [' });
      assert.equal(malformed.status, 400);
    });

    it('keeps a resource embedded in an active run from being deleted', async () => {
      openai.reply({ type: 'hang' });
      const id = await submitAsync(t, runnable.id, { resources: [{ name: 'doc', resource: text.id }] });
      await openai.waitForRequests(1);
      assert.equal((await t.request(`/v1/resource/${text.id}`, { method: 'DELETE' })).status, 409);
      await t.request(`/v1/run/${id}/cancel`, jsonInit('POST', {}));
    });
  });
});

describe('agent HTTP tools under the default egress policy', function () {
  this.timeout(20_000);
  let t: TestRunloom;
  let openai: FakeVendorServer;
  let toolServer: http.Server;
  let hits = 0;

  before(async () => {
    openai = await startFakeVendor('openai');
    toolServer = http.createServer((_req, res) => {
      hits += 1;
      res.end('{}');
    });
    await new Promise<void>((resolve) => toolServer.listen(0, '127.0.0.1', resolve));
    // Only the fake vendor is let in; the tool server on another loopback port stays refused.
    t = await startTestRunloom({ egressAllow: [new URL(openai.baseUrl).host] });
    await useFakeVendor(t, openai);
  });
  after(async () => {
    await t?.close();
    await openai?.close();
    await new Promise((resolve) => toolServer.close(resolve));
  });

  it('refuses a loopback destination, tells the model why, and sends nothing there', async () => {
    openai.reply({ type: 'tool-call', toolName: 'internal', input: { q: 'secrets' } }, { type: 'text', chunks: ['I could not reach it.'] });
    const agent = await createRunnable(t, {
      type: 'agent',
      provider: 'openai',
      model: openai.model,
      prompt: { messages: [{ role: 'user', content: 'fetch it' }] },
      tools: [{ type: 'http', name: 'internal', method: 'GET', url: `http://127.0.0.1:${(toolServer.address() as AddressInfo).port}/admin` }],
    });
    const run = await waitForRun(t, await submitAsync(t, agent.id));
    assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
    assert.equal(run.outputs[0].text_value, 'I could not reach it.');
    assert.equal(hits, 0);
    assert.match(JSON.stringify(openai.requests[1]!.body.messages), /loopback/);
  });
});
