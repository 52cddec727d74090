import assert from 'node:assert/strict';
import { WorkspaceEvents, type PublishedWorkspaceEvent } from '../packages/core/src/domain/workspace-events/workspace-events';
import { startFakeVendor, type FakeVendorServer } from '../packages/core/src/testing/fake-vendors';
import { ManualClock } from '../packages/core/src/testing/manual-clock';
import { startTestRunloom } from './support/harness';
import { createRunnable, jsonInit, promptConfig, useFakeVendor, type Json } from './support/runs';

const ACCOUNT = 'acct-a';

const task = (id: string, type: string, input: Json = {}, extra: Json = {}): Json => ({ id, name: `task ${id}`, type, input, ...extra });
const wait = (id: string, seconds: number, extra: Json = {}): Json => task(id, 'wait', { seconds }, extra);
const specOf = (...phases: Json[][]): Json => ({ name: 'test process', phases: phases.map((tasks, index) => ({ id: `p${index + 1}`, name: `phase ${index + 1}`, tasks })) });

/** A Runloom with a workspace, and the process run calls the tests make over HTTP. */
async function startProcesses(options: { clock?: ManualClock; allowPrivateNetwork?: boolean } = {}) {
  const t = await startTestRunloom(options);
  const workspace = await t.runloom.workspaces.create(ACCOUNT, { name: 'processes' }, 'test');
  const base = `/workspace/${workspace.id}/processes`;
  const events = t.runloom.container.get<WorkspaceEvents>(WorkspaceEvents);
  const api = {
    t,
    workspace,
    base,
    async create(spec: Json, extra: Json = {}, processId = 'release'): Promise<Json> {
      const response = await t.request(`${base}/${processId}/runs`, jsonInit('POST', { spec, inputs: {}, metadata: {}, instructions: '', ...extra }));
      assert.equal(response.status, 201, await response.clone().text());
      return ((await response.json()) as Json).data;
    },
    post(runId: string, action: string, body?: Json, account?: string): Promise<Response> {
      return t.request(`${base}/runs/${runId}/${action}`, body === undefined ? { method: 'POST', account } : jsonInit('POST', body, account));
    },
    async act(runId: string, action: string, body?: Json): Promise<Json> {
      const response = await api.post(runId, action, body);
      assert.equal(response.status, 200, await response.clone().text());
      return (await response.json()) as Json;
    },
    async get(runId: string): Promise<Json> {
      const response = await t.request(`${base}/runs/${runId}`);
      assert.equal(response.status, 200, await response.clone().text());
      return ((await response.json()) as Json).data;
    },
    /** Resolves with the run once `holds` is true of it: checked now, then on each of its events. */
    reach(runId: string, holds: (run: Json) => boolean, what = 'the expected state'): Promise<Json> {
      return new Promise((resolve, reject) => {
        let done = false;
        const check = (run: Json): void => {
          if (done || !holds(run)) return;
          done = true;
          subscription.unsubscribe();
          resolve(run);
        };
        const subscription = events.subscribe(workspace.id, ({ event }: PublishedWorkspaceEvent) => {
          if (event.type === 'process.run.updated' && event.run_id === runId) check(event.run as Json);
        });
        api.get(runId).then(check, reject);
        void what;
      });
    },
    status: (runId: string, status: string) => api.reach(runId, (run) => run.status === status),
  };
  return api;
}

function taskOf(run: Json, phaseId: string, taskId: string): Json {
  return run.phases.find((phase: Json) => phase.id === phaseId).tasks.find((entry: Json) => entry.id === taskId);
}

describe('process runs', function () {
  this.timeout(20_000);

  describe('specs and records', () => {
    let p: Awaited<ReturnType<typeof startProcesses>>;
    before(async () => (p = await startProcesses()));
    after(() => p.t.close());

    const invalid: [string, Json, string, RegExp][] = [
      ['no phases', { name: 'x', phases: [] }, 'spec.phases', /at least one phase/],
      ['an unknown task type', specOf([task('a', 'teleport')]), 'spec.phases.0.tasks.0.type', /one of prompt, command, runnable, approval, wait/],
      ['duplicate phase ids', { name: 'x', phases: [{ id: 'p', name: 'a', tasks: [wait('a', 0)] }, { id: 'p', name: 'b', tasks: [wait('a', 0)] }] }, 'spec.phases.1.id', /duplicate phase id 'p'/],
      ['duplicate task ids', specOf([wait('a', 0), wait('a', 1)]), 'spec.phases.0.tasks.1.id', /duplicate task id 'a'/],
      ['unknown needs', specOf([wait('a', 0, { needs: ['ghost'] })]), 'spec.phases.0.tasks.0.needs.0', /needs 'ghost', which is not a task of phase 'p1'/],
      ['a cycle in needs', specOf([wait('a', 0, { needs: ['c'] }), wait('b', 0, { needs: ['a'] }), wait('c', 0, { needs: ['b'] })]), 'spec.phases.0.tasks', /cycle: a → c → b → a/],
      ['a wait without seconds', specOf([task('a', 'wait')]), 'spec.phases.0.tasks.0.input.seconds', /wait task/],
      ['a prompt without prompt', specOf([task('a', 'prompt', { text: 'hi' })]), 'spec.phases.0.tasks.0.input.prompt', /prompt task/],
      ['a runnable without runnable_id', specOf([task('a', 'runnable')]), 'spec.phases.0.tasks.0.input.runnable_id', /runnable task/],
      ['a retry of 0 attempts', specOf([wait('a', 0, { retry: { max_attempts: 0 } })]), 'spec.phases.0.tasks.0.retry.max_attempts', /at least 1/],
      ['an id with a slash', specOf([wait('a/b', 0)]), 'spec.phases.0.tasks.0.id', /letters, digits/],
    ];
    for (const [what, spec, path, message] of invalid) {
      it(`refuses a spec with ${what}: 400 naming ${path}`, async () => {
        const response = await p.t.request(`${p.base}/release/runs`, jsonInit('POST', { spec }));
        assert.equal(response.status, 400);
        const body = (await response.json()) as Json;
        const detail = body.details.find((entry: Json) => entry.path === path);
        assert.ok(detail, `no detail at ${path}: ${JSON.stringify(body.details)}`);
        assert.match(detail.message, message);
      });
    }

    it('creates a run in status created with the record shape of docs/api.md, lists and reads it; another account sees 404', async () => {
      const run = await p.create(specOf([wait('a', 0), task('b', 'approval', { message: 'ok?' }, { needs: ['a'] })]), { inputs: { x: 1 }, metadata: { m: true }, instructions: 'be careful' });
      assert.deepEqual(Object.keys(run).sort(), ['completed_at', 'created_at', 'id', 'inputs', 'instructions', 'metadata', 'phases', 'process_id', 'spec', 'started_at', 'status', 'workspace_id']);
      assert.equal(run.status, 'created');
      assert.deepEqual([run.process_id, run.workspace_id, run.inputs, run.metadata, run.instructions], ['release', p.workspace.id, { x: 1 }, { m: true }, 'be careful']);
      assert.deepEqual(Object.keys(run.phases[0]).sort(), ['id', 'name', 'status', 'tasks']);
      assert.deepEqual(run.phases[0].tasks[0], { id: 'a', name: 'task a', type: 'wait', status: 'pending', attempts: 0, output: null, error: null, started_at: null, completed_at: null });
      const list = (await (await p.t.request(`${p.base}/release/runs`)).json()) as Json;
      assert.ok(list.data.some((entry: Json) => entry.id === run.id));
      assert.deepEqual((await p.get(run.id)).id, run.id);
      assert.equal((await p.t.request(`${p.base}/runs/${run.id}`, { account: 'acct-b' })).status, 404);
      assert.equal((await p.post(run.id, 'start', undefined, 'acct-b')).status, 404);
    });
  });

  describe('the transition table', () => {
    const clock = new ManualClock(Date.parse('2026-01-01T00:00:00Z'));
    let p: Awaited<ReturnType<typeof startProcesses>>;
    before(async () => (p = await startProcesses({ clock })));
    after(() => p.t.close());

    /** A run brought to `status`: a 1-hour wait keeps a run running; an approval parks it. */
    async function runIn(status: string): Promise<Json> {
      const spec = status === 'waiting_approval' ? specOf([task('a', 'approval', { message: 'ok?' })]) : status === 'succeeded' ? specOf([wait('a', 0)]) : status === 'failed' ? specOf([task('a', 'approval', {})]) : specOf([wait('a', 3600)]);
      const run = await p.create(spec);
      if (status === 'created') return run;
      await p.act(run.id, 'start');
      if (status === 'failed') await p.act(run.id, 'approve', { decision: 'reject' });
      if (status === 'paused') await p.act(run.id, 'pause');
      if (status === 'cancelled') await p.act(run.id, 'cancel');
      return p.status(run.id, status);
    }

    const allowed: Record<string, string[]> = {
      start: ['created'],
      pause: ['running'],
      resume: ['paused'],
      cancel: ['created', 'running', 'paused', 'waiting_approval'],
      approve: ['waiting_approval'],
    };
    for (const status of ['created', 'running', 'paused', 'waiting_approval', 'succeeded', 'failed', 'cancelled']) {
      it(`a ${status} run refuses every action its state does not allow with 409 naming '${status}'`, async () => {
        for (const [action, statuses] of Object.entries(allowed)) {
          if (statuses.includes(status)) continue;
          const run = await runIn(status);
          const response = await p.post(run.id, action, action === 'approve' ? {} : undefined);
          assert.equal(response.status, 409, `${action} on ${status}`);
          assert.match(((await response.json()) as Json).error, new RegExp(`is ${status};`));
        }
        if (status === 'succeeded' || status === 'cancelled') {
          const run = await runIn(status);
          for (const action of ['retry', 'skip']) {
            const response = await p.post(run.id, `tasks/p1/a/${action}`);
            assert.equal(response.status, 409);
            assert.match(((await response.json()) as Json).error, new RegExp(`is ${status};`));
          }
        }
      });
    }

    it('retry and skip of a task that is neither failed nor pending → 409 naming its state; an unknown task → 404', async () => {
      const run = await runIn('running');
      for (const action of ['retry', 'skip']) {
        const response = await p.post(run.id, `tasks/p1/a/${action}`);
        assert.equal(response.status, 409);
        assert.match(((await response.json()) as Json).error, /task p1\/a is running; .* failed or pending/);
        assert.equal((await p.post(run.id, `tasks/p1/nope/${action}`)).status, 404);
      }
      await p.act(run.id, 'cancel');
    });
  });

  describe('execution', () => {
    const clock = new ManualClock(Date.parse('2026-01-01T00:00:00Z'));
    let p: Awaited<ReturnType<typeof startProcesses>>;
    let openai: FakeVendorServer;
    before(async () => {
      openai = await startFakeVendor('openai');
      p = await startProcesses({ clock, allowPrivateNetwork: true });
      await useFakeVendor(p.t, openai);
    });
    after(async () => {
      await p.t.close();
      await openai.close();
    });
    beforeEach(() => openai.reset());

    it('runs independent tasks at once and a task after the ones it needs; phases in order', async () => {
      const run = await p.create(specOf([wait('a', 10), wait('b', 10), wait('c', 5, { needs: ['a', 'b'] })], [wait('d', 0)]));
      await p.act(run.id, 'start');
      const started = await p.get(run.id);
      assert.deepEqual(started.phases[0].tasks.map((entry: Json) => entry.status), ['running', 'running', 'pending']);
      assert.equal(started.phases[1].status, 'pending');
      await clock.advance(10_000);
      const third = await p.reach(run.id, (current) => taskOf(current, 'p1', 'c').status === 'running');
      assert.deepEqual(third.phases[0].tasks.map((entry: Json) => entry.status), ['succeeded', 'succeeded', 'running']);
      assert.equal(third.phases[1].tasks[0].status, 'pending');
      await clock.advance(5_000);
      const done = await p.status(run.id, 'succeeded');
      assert.deepEqual(done.phases.map((phase: Json) => phase.status), ['succeeded', 'succeeded']);
      assert.equal(Date.parse(taskOf(done, 'p1', 'c').started_at) - Date.parse(taskOf(done, 'p1', 'a').started_at), 10_000);
    });

    it('a wait task is a durable timer: running for its seconds, then succeeded', async () => {
      const run = await p.create(specOf([wait('w', 3600)]));
      await p.act(run.id, 'start');
      await clock.advance(3_599_000);
      assert.equal(taskOf(await p.get(run.id), 'p1', 'w').status, 'running');
      await clock.advance(1_000);
      const done = await p.status(run.id, 'succeeded');
      assert.equal(taskOf(done, 'p1', 'w').attempts, 1);
    });

    it('retries a failing task with backoff (10 s, then 20 s), fails the run when attempts run out; a manual retry puts it back to running', async () => {
      // No model anywhere: every attempt of the prompt task fails with the error saying what to set.
      const run = await p.create(specOf([task('ask', 'prompt', { prompt: 'hi' }, { retry: { max_attempts: 3, initial_interval_seconds: 10, backoff_coefficient: 2, maximum_interval_seconds: 60 } })]));
      await p.act(run.id, 'start');
      let current = await p.reach(run.id, (entry) => taskOf(entry, 'p1', 'ask').error !== null);
      assert.deepEqual([taskOf(current, 'p1', 'ask').status, taskOf(current, 'p1', 'ask').attempts], ['pending', 1]);
      assert.equal(taskOf(current, 'p1', 'ask').error.code, 'no_model');
      assert.match(taskOf(current, 'p1', 'ask').error.message, /models\.default in the workspace configuration/);
      await clock.advance(9_999);
      assert.equal(taskOf(await p.get(run.id), 'p1', 'ask').attempts, 1);
      await clock.advance(1);
      current = await p.reach(run.id, (entry) => taskOf(entry, 'p1', 'ask').attempts === 2 && taskOf(entry, 'p1', 'ask').status === 'pending');
      await clock.advance(19_999);
      assert.equal(taskOf(await p.get(run.id), 'p1', 'ask').attempts, 2);
      await clock.advance(1);
      current = await p.status(run.id, 'failed');
      assert.deepEqual([taskOf(current, 'p1', 'ask').status, taskOf(current, 'p1', 'ask').attempts], ['failed', 3]);
      assert.equal(current.phases[0].status, 'failed');

      const retried = await p.act(run.id, 'tasks/p1/ask/retry');
      assert.match(retried.message, /will run again/);
      current = await p.reach(run.id, (entry) => taskOf(entry, 'p1', 'ask').attempts === 4);
      assert.notEqual(current.status, 'failed');
      await p.act(run.id, 'cancel');
    });

    it('skip: a failed task skipped lets the run go on to its next phase', async () => {
      const run = await p.create(specOf([task('gate', 'approval', {}), wait('after', 0, { needs: ['gate'] })], [wait('next', 0)]));
      await p.act(run.id, 'start');
      await p.act(run.id, 'approve', { phaseId: 'p1', taskId: 'gate', decision: 'reject', comment: 'not now' });
      const failed = await p.status(run.id, 'failed');
      assert.deepEqual(taskOf(failed, 'p1', 'gate').error.code, 'rejected');
      assert.equal(failed.phases[1].status, 'pending');
      const skipped = await p.act(run.id, 'tasks/p1/gate/skip');
      assert.equal(taskOf(skipped.data, 'p1', 'gate').status, 'skipped');
      const done = await p.status(run.id, 'succeeded');
      assert.deepEqual(done.phases.map((phase: Json) => phase.status), ['succeeded', 'succeeded']);
    });

    it('an approval parks the run; {} approves it; a timeout applies its outcome', async () => {
      const manual = await p.create(specOf([task('ok', 'approval', { message: 'Ship it?' })]));
      await p.act(manual.id, 'start');
      await p.status(manual.id, 'waiting_approval');
      const approved = await p.act(manual.id, 'approve', {});
      assert.match(approved.message, /approved p1\/ok/);
      const done = await p.status(manual.id, 'succeeded');
      assert.deepEqual(taskOf(done, 'p1', 'ok').output, { decision: 'approve', comment: null });

      const timed = await p.create(specOf([task('ok', 'approval', { message: 'Ship it?', timeout_seconds: 60, timeout_outcome: 'approve' })], [task('late', 'approval', { timeout_seconds: 30 })]));
      await p.act(timed.id, 'start');
      await clock.advance(59_999);
      assert.equal((await p.get(timed.id)).status, 'waiting_approval');
      await clock.advance(1);
      await p.reach(timed.id, (entry) => taskOf(entry, 'p1', 'ok').status === 'succeeded');
      await clock.advance(30_000);
      const rejected = await p.status(timed.id, 'failed');
      assert.equal(taskOf(rejected, 'p2', 'late').error.code, 'rejected');
      assert.match(taskOf(rejected, 'p2', 'late').error.message, /no decision within 30 s/);
    });

    it('pause lets running tasks finish and starts none; resume goes on', async () => {
      const run = await p.create(specOf([wait('a', 10)], [wait('b', 0)]));
      await p.act(run.id, 'start');
      const paused = await p.act(run.id, 'pause');
      assert.match(paused.message, /paused/);
      await clock.advance(10_000);
      const finished = await p.reach(run.id, (entry) => taskOf(entry, 'p1', 'a').status === 'succeeded');
      assert.deepEqual([finished.status, taskOf(finished, 'p2', 'b').status], ['paused', 'pending']);
      await p.act(run.id, 'resume');
      await p.status(run.id, 'succeeded');
    });

    it('cancel aborts a running task and cancels the rest', async () => {
      openai.reply({ type: 'hang' });
      const run = await p.create(specOf([task('ask', 'prompt', { prompt: 'think long' }), wait('w', 60)], [wait('later', 0)]), { model: { provider: 'openai', model: openai.model } });
      await p.act(run.id, 'start');
      await openai.waitForRequests(1);
      const cancelled = await p.act(run.id, 'cancel');
      assert.equal(cancelled.data.status, 'cancelled');
      assert.deepEqual(cancelled.data.phases.map((phase: Json) => phase.status), ['cancelled', 'cancelled']);
      assert.deepEqual(cancelled.data.phases[0].tasks.map((entry: Json) => entry.status), ['cancelled', 'cancelled']);
      // The running attempt was aborted, and its end changes nothing.
      const logs = (await (await p.t.request(`${p.base}/runs/${run.id}/logs`)).json()) as Json;
      assert.ok(logs.data.some((entry: Json) => entry.message === 'run running → cancelled'));
      assert.equal((await p.get(run.id)).status, 'cancelled');
    });

    it("a prompt task without a model anywhere else asks the workspace configuration's models.default", async () => {
      const workspace = await p.t.runloom.workspaces.create(ACCOUNT, { name: 'configured' }, 'test');
      await p.t.runloom.workspaceConfig.patch(ACCOUNT, workspace.id, { models: { default: { provider: 'openai', model: openai.model } } });
      const created = await p.t.runloom.processes.create(ACCOUNT, workspace.id, 'configured', { spec: specOf([task('ask', 'prompt', { prompt: 'Hi?' })]) } as never);
      await p.t.runloom.processes.act(ACCOUNT, workspace.id, created.id, 'start');
      await openai.waitForRequests(1);
      assert.equal(openai.requests[0]!.body.model, openai.model);
    });

    it('timeout_seconds fails an attempt that runs longer (the vendor call is aborted); the retry policy then applies', async () => {
      openai.reply({ type: 'hang' });
      const run = await p.create(specOf([task('slow', 'prompt', { prompt: 'think' }, { timeout_seconds: 30, retry: { max_attempts: 2, initial_interval_seconds: 1 } })]), {
        model: { provider: 'openai', model: openai.model },
      });
      await p.act(run.id, 'start');
      await openai.waitForRequests(1);
      await clock.advance(30_000);
      const retrying = await p.reach(run.id, (entry) => taskOf(entry, 'p1', 'slow').error !== null);
      assert.deepEqual([taskOf(retrying, 'p1', 'slow').status, taskOf(retrying, 'p1', 'slow').error.code], ['pending', 'timeout']);
      assert.match(taskOf(retrying, 'p1', 'slow').error.message, /within its timeout of 30 s/);
      await clock.advance(1_000);
      const done = await p.status(run.id, 'succeeded');
      assert.deepEqual([taskOf(done, 'p1', 'slow').attempts, taskOf(done, 'p1', 'slow').output], [2, 'Hello from openai']);
    });

    it('a command task executes the workspace command with its args; its output is the execution output text', async () => {
      await p.t.runloom.commands.create(ACCOUNT, p.workspace.id, { trigger: 'greet', type: 'prompt', template: 'Greet {{who}}', args: [{ name: 'who', required: true }] });
      openai.reply({ type: 'text', chunks: ['Hello, ', 'team'] });
      const run = await p.create(specOf([task('hello', 'command', { trigger: 'greet', args: ['team'] })]), { model: { provider: 'openai', model: openai.model } });
      await p.act(run.id, 'start');
      const done = await p.status(run.id, 'succeeded');
      assert.equal(taskOf(done, 'p1', 'hello').output, 'Hello, team');
      assert.match(JSON.stringify(openai.requests[0]!.body), /Greet team/);
      const missing = await p.create(specOf([task('nope', 'command', { trigger: 'ghost', args: [] })]));
      await p.act(missing.id, 'start');
      const failed = await p.status(missing.id, 'failed');
      assert.equal(taskOf(failed, 'p1', 'nope').error.code, 'not_found');
    });

    it('prompt and runnable tasks: the model from the request, a runnable run’s outputs; logs and events record it', async () => {
      const runnable = await createRunnable(p.t, promptConfig(openai));
      const run = await p.create(specOf([task('ask', 'prompt', { prompt: 'Say hello' })], [task('sub', 'runnable', { runnable_id: runnable.id })]), {
        model: { provider: 'openai', model: openai.model },
        instructions: 'You are terse.',
      });
      const stream = await p.t.request(`${p.base}/runs/${run.id}/events`);
      assert.equal(stream.headers.get('content-type'), 'text/event-stream');
      await p.act(run.id, 'start');
      const text = await stream.text();
      const events = text
        .split('\n\n')
        .map((block) => block.split('\n').find((line) => line.startsWith('data: ')))
        .filter((line) => line !== undefined)
        .map((line) => JSON.parse(line.slice(6)) as Json);
      assert.equal(events[0]!.type, 'log');
      const last = events.at(-1)!;
      assert.deepEqual([last.type, last.status], ['process.run.updated', 'succeeded']);
      assert.ok(events.some((event) => event.type === 'task.updated' && event.task_id === 'sub' && event.status === 'running'));
      const done = last.run as Json;
      assert.equal(taskOf(done, 'p1', 'ask').output, 'Hello from openai');
      assert.equal(taskOf(done, 'p2', 'sub').output[0].text_value, 'Hello from openai');
      assert.equal(openai.requests.length, 2);

      const logs = ((await (await p.t.request(`${p.base}/runs/${run.id}/logs`)).json()) as Json).data as Json[];
      assert.deepEqual(logs.map((entry) => entry.seq), logs.map((_, index) => index + 1));
      assert.ok(logs.some((entry) => entry.type === 'output' && entry.task_id === 'ask' && entry.message === 'Hello from openai'));
      assert.ok(logs.some((entry) => entry.message === 'task pending → running: attempt 1' && entry.task_id === 'sub'));
      assert.equal(logs.at(-1)!.message, 'run running → succeeded');
    });
  });
});
