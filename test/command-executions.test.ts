import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRunloom, type Runloom } from '../packages/core/src/index';
import { createTestSchema, TEST_DATABASE_URL, type TestSchema } from '../packages/core/test-support/postgres-test-store';
import type { CommandExecution } from '../packages/core/src/domain/commands/command-schemas';
import { startFakeVendor, type FakeVendorServer } from '../packages/core/src/testing/fake-vendors';
import { startTestRunloom, type TestRunloom } from './support/harness';
import { json } from './support/threads';
import { startCrashChild } from './support/crash-child';
import { waitUntil } from './support/wait';

/** Executions of workspace commands through HTTP (docs/api.md#commands). */
describe('command executions', function () {
  this.timeout(30_000);
  let t: TestRunloom;
  let vendor: FakeVendorServer;
  let workspaceId: string;
  let base: string;

  before(async () => {
    vendor = await startFakeVendor('openai');
    t = await startTestRunloom({ shellCommands: true, allowPrivateNetwork: true });
    const provider = await t.request('/v1/llm-provider/openai', json('PUT', { enabled: true, credentials: vendor.credentials }));
    assert.ok(provider.status === 200 || provider.status === 201, await provider.text());
  });
  after(async () => {
    await t?.close();
    await vendor?.close();
  });
  beforeEach(async () => {
    workspaceId = (await dataOf<{ id: string }>(await t.request('/workspaces', json('POST', { name: 'executions' })), 201)).id;
    base = `/workspace/${workspaceId}`;
  });

  async function dataOf<T = any>(response: Response, status = 200): Promise<T> {
    const text = await response.text();
    assert.equal(response.status, status, text);
    return (JSON.parse(text) as { data: T }).data;
  }

  async function command(body: Record<string, unknown>): Promise<void> {
    await dataOf(await t.request(`${base}/commands`, json('POST', body)), 201);
  }

  async function execute(trigger: string, body: Record<string, unknown> = {}): Promise<string> {
    const accepted = await dataOf<{ runId: string; status: string }>(await t.request(`${base}/command/${trigger}/execute`, json('POST', body)));
    assert.equal(accepted.status, 'queued');
    return accepted.runId;
  }

  /** The execution once it has finished (waited for through the facade), read through HTTP. */
  async function finished(trigger: string, runId: string): Promise<CommandExecution> {
    await t.runloom.commandExecutions.waitForEnd(runId);
    return dataOf<CommandExecution>(await t.request(`${base}/command/${trigger}/executions/${runId}`));
  }

  async function run(trigger: string, body: Record<string, unknown> = {}): Promise<CommandExecution> {
    return finished(trigger, await execute(trigger, body));
  }

  async function localRoot(): Promise<string> {
    return (await t.runloom.workspaces.files('acct-a', workspaceId)).localRoot!;
  }

  describe('shell', () => {
    it('runs argv without a shell in the workspace folder: metacharacters in argv and args arrive as plain text', async () => {
      fs.writeFileSync(path.join(await localRoot(), 'marker.txt'), 'here');
      await command({ trigger: 'echo', type: 'shell', argv: ['printf', '[%s]\\n', '$(touch pwned)', '; ls'], args: [{ name: 'a' }, { name: 'b', default: '*' }] });
      const done = await run('echo', { args: ['`id` && rm -rf / | cat > x'] });
      assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
      assert.equal(done.output, '[$(touch pwned)]\n[; ls]\n[`id` && rm -rf / | cat > x]\n[*]\n');
      assert.equal(done.exit_code, 0);
      assert.deepEqual(done.args, ['`id` && rm -rf / | cat > x', '*']);
      assert.equal(fs.existsSync(path.join(await localRoot(), 'pwned')), false);
      assert.ok(done.started_at && done.completed_at);

      await command({ trigger: 'where', type: 'shell', argv: ['cat', 'marker.txt'] });
      assert.equal((await run('where')).output, 'here');
    });

    it('fails on a non-zero exit, a program that does not exist, and past its time limit', async () => {
      await command({ trigger: 'exit-3', type: 'shell', argv: ['sh', '-c', 'echo partial; exit 3'] });
      const exited = await run('exit-3');
      assert.deepEqual([exited.status, exited.exit_code, exited.output, exited.error?.code], ['failed', 3, 'partial\n', 'exit_code']);

      await command({ trigger: 'missing', type: 'shell', argv: ['/no/such/program-runloom'] });
      const missing = await run('missing');
      assert.deepEqual([missing.status, missing.error?.code], ['failed', 'launch_failed']);
      assert.match(missing.error!.message, /program-runloom/);

      await command({ trigger: 'slow', type: 'shell', argv: ['sleep', '30'], timeout_seconds: 1 });
      const slow = await run('slow');
      assert.deepEqual([slow.status, slow.error?.code], ['failed', 'timeout']);
      assert.match(slow.error!.message, /1 s/);
    });

    it('keeps the output up to its cap and says it was cut', async () => {
      await command({ trigger: 'loud', type: 'shell', argv: ['printf', '%05000d', '0'], max_output_bytes: 1000 });
      const loud = await run('loud');
      assert.equal(loud.status, 'succeeded');
      assert.equal(loud.output, '0'.repeat(1000));
      assert.equal(loud.output_truncated, true);
    });

    it('streams the output live while it runs and replays it afterwards; follows it as server-sent events', async () => {
      await command({ trigger: 'gated', type: 'shell', argv: ['sh', '-c', 'echo first; while [ ! -e gate ]; do sleep 0.02; done; echo second'] });
      const runId = await execute('gated');
      const events = await t.request(`${base}/command/gated/executions/${runId}/events`);
      assert.equal(events.headers.get('content-type')?.split(';')[0], 'text/event-stream');
      const output = await t.request(`${base}/command/gated/executions/${runId}/output`);
      assert.equal(output.status, 200);
      assert.match(output.headers.get('content-type') ?? '', /^text\/plain/);
      const reader = output.body!.getReader();
      let live = '';
      while (!live.includes('first\n')) live += new TextDecoder().decode((await reader.read()).value);
      // Still running: the rest comes only once the gate opens.
      assert.equal((await dataOf<CommandExecution>(await t.request(`${base}/command/gated/executions/${runId}`))).status, 'running');
      fs.writeFileSync(path.join(await localRoot(), 'gate'), '');
      for (let next = await reader.read(); !next.done; next = await reader.read()) live += new TextDecoder().decode(next.value);
      assert.equal(live, 'first\nsecond\n');

      const replay = await t.request(`${base}/command/gated/executions/${runId}/output`);
      assert.equal(await replay.text(), 'first\nsecond\n');

      const frames = parseFrames(await events.text());
      const statuses = frames.filter((frame) => frame.event === 'status').map((frame) => (JSON.parse(frame.data) as CommandExecution).status);
      assert.equal(statuses[0] === 'queued' || statuses[0] === 'running', true, statuses.join());
      assert.equal(statuses.at(-1), 'succeeded');
      assert.ok(statuses.includes('running'));
      const text = frames.filter((frame) => frame.event === 'output').map((frame) => (JSON.parse(frame.data) as { text: string }).text).join('');
      assert.equal(text, 'first\nsecond\n');

      // Once finished, the event stream answers the final state and ends.
      const late = parseFrames(await (await t.request(`${base}/command/gated/executions/${runId}/events`)).text());
      assert.deepEqual(late.map((frame) => frame.event), ['output', 'status']);
    });

    it('cancel kills the whole process group, grandchildren included; a finished execution is 409', async () => {
      await command({ trigger: 'family', type: 'shell', argv: ['sh', '-c', 'sleep 300 & echo $!; wait'] });
      const runId = await execute('family');
      const reader = (await t.request(`${base}/command/family/executions/${runId}/output`)).body!.getReader();
      let printed = '';
      while (!printed.includes('\n')) printed += new TextDecoder().decode((await reader.read()).value);
      const grandchild = Number(printed.trim());
      assert.ok(isAlive(grandchild));

      const cancelled = await t.request(`${base}/command/family/executions/${runId}`, { method: 'DELETE' });
      assert.equal(cancelled.status, 200);
      assert.equal(((await cancelled.json()) as { data: CommandExecution }).data.status, 'cancelled');
      await waitUntil(() => !isAlive(grandchild), 'the grandchild sleep to be killed with its group');
      assert.equal((await reader.read()).done, true);
      const again = await t.request(`${base}/command/family/executions/${runId}`, { method: 'DELETE' });
      assert.equal(again.status, 409);
      assert.match(await again.text(), /already cancelled/);
      assert.equal((await finished('family', runId)).status, 'cancelled');
    });

    it('answers 403 saying how to enable shell commands when the server has them off, and runs nothing', async () => {
      const off = await startTestRunloom();
      try {
        const id = (await dataOf<{ id: string }>(await off.request('/workspaces', json('POST', { name: 'off' })), 201)).id;
        assert.equal((await off.request(`/workspace/${id}/commands`, json('POST', { trigger: 'touch', type: 'shell', argv: ['touch', 'ran'] }))).status, 201);
        const refused = await off.request(`/workspace/${id}/command/touch/execute`, json('POST', {}));
        assert.equal(refused.status, 403);
        assert.match(await refused.text(), /--enable-shell-commands/);
        const root = (await off.runloom.workspaces.files('acct-a', id)).localRoot!;
        assert.equal(fs.existsSync(path.join(root, 'ran')), false);
        assert.equal((await dataOf<{ usage_count: number }>(await off.request(`/workspace/${id}/command/touch`))).usage_count, 0);
      } finally {
        await off.close();
      }
    });
  });

  it('checks args against the declared ones and the body shape, naming what is wrong', async () => {
    await command({ trigger: 'two', type: 'shell', argv: ['echo'], args: [{ name: 'first', required: true }, { name: 'second' }] });
    const cases: [unknown, RegExp][] = [
      [{ args: [] }, /needs args first/],
      [{ args: ['a', 'b', 'c'] }, /at most 2 args/],
      [{ args: 'a' }, /args must be an array of strings/],
      [{ args: [1] }, /args/],
      [{ args: ['a'], threadId: 't1' }, /threadId and toolCallId together/],
      [{ args: ['a\u0000'] }, /NUL/],
    ];
    for (const [body, message] of cases) {
      const response = await t.request(`${base}/command/two/execute`, json('POST', body));
      const text = await response.text();
      assert.equal(response.status, 400, `${JSON.stringify(body)}: ${text}`);
      assert.match(text, message);
    }
    assert.equal((await t.request(`${base}/command/nope/execute`, json('POST', {}))).status, 404);
    assert.equal((await t.request(`${base}/command/two/executions/0196b3c4-6a1e-7c3b-9a52-5d0c2f8e1a77`)).status, 404);
    assert.equal((await t.request(`${base}/command/two/execute`, json('POST', { args: ['x'], threadId: 'none', toolCallId: 'c' }))).status, 404);
  });

  describe('prompt', () => {
    it('renders the template with the args and streams the model answer; the model comes from the request, the command or the workspace config', async () => {
      await command({ trigger: 'greet', type: 'prompt', template: 'Greet {{ name }} in {{lang}}', args: [{ name: 'name', required: true }, { name: 'lang', default: 'French' }] });
      const noModel = await t.request(`${base}/command/greet/execute`, json('POST', { args: ['Ada'] }));
      assert.equal(noModel.status, 400);
      assert.match(await noModel.text(), /models\.default/);

      vendor.reply({ type: 'text', chunks: ['Bonjour', ' Ada'] });
      const requests = vendor.requests.length;
      const done = await run('greet', { args: ['Ada'], model: { provider: 'openai', model: vendor.model } });
      assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
      assert.equal(done.output, 'Bonjour Ada');
      assert.match(JSON.stringify(vendor.requests[requests]!.body), /Greet Ada in French/);

      const config = await t.request(`${base}/config`, json('PATCH', { models: { default: { provider: 'openai', model: vendor.model } } }));
      assert.equal(config.status, 200, await config.text());
      vendor.reply({ type: 'text', chunks: ['Hallo'] });
      assert.equal((await run('greet', { args: ['Bo', 'German'] })).output, 'Hallo');
      assert.match(JSON.stringify(vendor.requests.at(-1)!.body), /Greet Bo in German/);
    });

    it('cancel aborts the model call of a running prompt', async () => {
      await command({ trigger: 'stuck', type: 'prompt', template: 'Wait', model: { provider: 'openai', model: vendor.model } });
      vendor.reply({ type: 'hang' });
      const requests = vendor.requests.length;
      const runId = await execute('stuck');
      await vendor.waitForRequests(requests + 1);
      const cancelled = await t.request(`${base}/command/stuck/executions/${runId}`, { method: 'DELETE' });
      assert.equal(cancelled.status, 200);
      await vendor.requests[requests]!.closed;
      const final = await finished('stuck', runId);
      assert.deepEqual([final.status, final.error?.code], ['cancelled', 'cancelled']);
    });

    it('fails with the vendor error when the provider refuses', async () => {
      await command({ trigger: 'broken', type: 'prompt', template: 'Hi', model: { provider: 'anthropic', model: 'claude-x' } });
      const done = await run('broken');
      assert.equal(done.status, 'failed');
      assert.match(done.error!.message, /anthropic is not configured/);
    });
  });

  it('runnable: starts a run of the runnable with the args as its inputs and ends with it', async () => {
    const runnable = (await (
      await t.request(
        '/v1/runnables',
        json('POST', {
          name: 'summarize',
          config_content_parsed: {
            name: 'summarize',
            prompt: { messages: [{ role: 'user', content: 'Summarize {{document}}' }] },
            llms: [{ model: `openai/${vendor.model}` }],
            inputs: [{ name: 'document', mime_types: ['text/plain'] }],
          },
        }),
      )
    ).json()) as { id: string };
    const resource = (await (
      await t.request('/v1/resources?name=notes.txt&directory_path=/cmd', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'notes' })
    ).json()) as { id: string };
    await command({ trigger: 'summarize', type: 'runnable', runnable_id: runnable.id, args: [{ name: 'document', required: true }] });
    vendor.reply({ type: 'text', chunks: ['A summary'] });
    const done = await run('summarize', { args: [resource.id] });
    assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
    assert.equal(done.output, 'A summary');
    assert.ok(done.run_id);
    const linked = (await (await t.request(`/v1/run/${done.run_id}`)).json()) as { status: string };
    assert.equal(linked.status, 'succeeded');

    const refused = await run('summarize', { args: ['no-such-resource'] });
    assert.equal(refused.status, 'failed');
    assert.equal(refused.error?.code, 'run_refused');
  });

  it('process: creates and starts a run of the process with the spec of its latest run and the args as inputs', async () => {
    await command({ trigger: 'pipeline', type: 'process', process_id: 'build', args: [{ name: 'target', default: 'prod' }] });
    const none = await t.request(`${base}/command/pipeline/execute`, json('POST', {}));
    assert.equal(none.status, 400);
    assert.match(await none.text(), /process 'build' has no run in this workspace/);

    const spec = { name: 'build', phases: [{ id: 'p1', name: 'Build', tasks: [{ id: 't1', name: 'Pause', type: 'wait', input: { seconds: 0 } }] }] };
    const first = await dataOf<{ id: string }>(await t.request(`${base}/processes/build/runs`, json('POST', { spec })), 201);
    const done = await run('pipeline');
    assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
    assert.ok(done.run_id && done.run_id !== first.id);
    const processRun = await dataOf<{ status: string; inputs: Record<string, unknown> }>(await t.request(`${base}/processes/runs/${done.run_id}`));
    assert.equal(processRun.status, 'succeeded');
    assert.deepEqual(processRun.inputs, { target: 'prod' });
  });

  it('appends the result to the thread as the tool call’s result', async () => {
    const toolCall = { type: 'tool-run_command', toolCallId: 'call-1', state: 'input-available', input: { trigger: 'hello' } };
    const saved = await t.request(`${base}/thread/t1/save`, json('POST', { messages: [{ id: 'm1', role: 'assistant', parts: [toolCall] }] }));
    assert.ok(saved.status === 200 || saved.status === 201, await saved.text());
    await command({ trigger: 'hello', type: 'shell', argv: ['echo', 'hello'] });
    await run('hello', { threadId: 't1', toolCallId: 'call-1' });
    await run('hello', { threadId: 't1', toolCallId: 'call-2' });
    const thread = await dataOf<{ messages: { role: string; parts: Record<string, unknown>[] }[] }>(await t.request(`${base}/thread/t1`));
    assert.deepEqual(thread.messages[0]!.parts[0], { ...toolCall, state: 'output-available', output: 'hello\n' });
    assert.deepEqual(thread.messages[1]!.parts[0], {
      type: 'dynamic-tool',
      toolName: 'hello',
      toolCallId: 'call-2',
      input: { args: [] },
      state: 'output-available',
      output: 'hello\n',
    });
  });

  it('publishes command.execution.updated on the workspace events for each transition', async () => {
    await command({ trigger: 'quick', type: 'shell', argv: ['true'] });
    const seen: string[] = [];
    const subscription = t.runloom.workspaceEvents.subscribe(workspaceId, (published) => {
      if (published.event.type === 'command.execution.updated') seen.push((published.event.execution as CommandExecution).status);
    });
    try {
      await run('quick');
      await waitUntil(() => seen.includes('succeeded'), 'the final event');
      assert.deepEqual(seen, ['queued', 'running', 'succeeded']);
    } finally {
      subscription.unsubscribe();
    }
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The frames of an event stream's text. */
function parseFrames(text: string): { event: string; data: string }[] {
  return text
    .split('\n\n')
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((line) => line.startsWith('event: '))?.slice(7);
      const data = lines.filter((line) => line.startsWith('data: ')).map((line) => line.slice(6)).join('\n');
      return event === undefined ? undefined : { event, data };
    })
    .filter((frame): frame is { event: string; data: string } => frame !== undefined);
}

for (const store of ['the embedded store', 'PostgreSQL'] as const) {
  describe(`command executions across kill -9 on ${store}`, function () {
    this.timeout(60_000);
    const CHILD = path.join(__dirname, 'fixtures', 'command-crash-child.ts');
    const ACCOUNT = 'acct-crash';
    let dataDir: string;
    let schema: TestSchema | undefined;
    let databaseUrl: string | undefined;
    let runloom: Runloom | undefined;
    let orphan: number | undefined;

    beforeEach(() => {
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-'));
      if (store === 'PostgreSQL') {
        schema = createTestSchema();
        databaseUrl = `${TEST_DATABASE_URL}?schema=${schema.schema}`;
      }
    });
    afterEach(async () => {
      await runloom?.close();
      runloom = undefined;
      // The shell command outlived the killed server in its own process group.
      if (orphan !== undefined && isAlive(orphan)) process.kill(-orphan, 'SIGKILL');
      await schema?.drop();
      schema = undefined;
      databaseUrl = undefined;
      fs.rmSync(dataDir, { recursive: true, force: true });
    });

    it('fails a shell command the crash interrupted, saying why it is not run again', async () => {
      const child = await startCrashChild(CHILD, [dataDir, ACCOUNT], databaseUrl);
      const { line } = child;
      const [, workspaceId, runId, pgid] = line.split(' ');
      orphan = Number(pgid);
      await child.kill();

      runloom = await createRunloom({ dataDir, databaseUrl, shellCommands: true });
      const final = await runloom.commandExecutions.waitForEnd(runId!);
      assert.equal(final?.status, 'failed');
      assert.equal(final?.error?.code, 'interrupted');
      assert.match(final!.error!.message, /not run again/);
      const read = await runloom.commandExecutions.get(ACCOUNT, workspaceId!, 'long', runId!);
      assert.equal(read.status, 'failed');
      assert.ok(read.completed_at);
    });
  });
}
