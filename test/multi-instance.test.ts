import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EventSource } from 'eventsource';
import pg from 'pg';
import { createTestSchema, TEST_DATABASE_URL } from '../packages/core/test-support/postgres-test-store';
import { createRunloom, type Runloom } from '../packages/core/src/index';
import { startFakeVendor, type FakeVendorServer } from '../packages/core/src/testing/fake-vendors';
import { bootstrapFlag, type ChildServer, createWorkspace, fetchToken, RUNLOOM_CLI, serveArgs, sharedInstanceFlags, startChildServer } from '../bench/child-server';
import { createScratchDatabase } from '../bench/scratch-database';
import { CallbackSink } from './support/callback-sink';
import { S3_CREDENTIALS, S3Server } from './support/s3-server';
import { assemble, gate, readChunks, readUntil, textOf } from './support/threads';
import { waitUntil } from './support/wait';

/**
 * Several `runloom serve` processes behind one load balancer (ARCHITECTURE.md, "Beyond one
 * machine"): two built servers on one fresh PostgreSQL database, one S3-compatible blob store
 * (s3rver), one workspaces folder and one secret key. Requests go to either; the work is done once, and a
 * `kill -9` of one hands its work to the other within the failover bound.
 */

/** The bucket of the instances' shared blob store. */
const BUCKET = 'runloom-multi';
const CLIENT = { account: 'acct-multi', id: 'multi-client', secret: 'multi-client-secret-0123456789' };
/** The failover bound (ARCHITECTURE.md, "Failover"): a dead instance's work is taken over within this. */
const FAILOVER_MS = 10_000;

type Json = Record<string, any>;

/** A fresh database on the test server, named for this run, with a connection to it; dropped at the end. */
async function createDatabase(): Promise<{ url: string; query(sql: string): Promise<Json[]>; drop(): Promise<void> }> {
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  const scratch = await createScratchDatabase(admin, TEST_DATABASE_URL, 'runloom_multi');
  const client = new pg.Client({ connectionString: scratch.url });
  await client.connect();
  return {
    url: scratch.url,
    query: async (sql) => (await client.query(sql)).rows as Json[],
    async drop() {
      await client.end();
      await scratch.drop();
      await admin.end();
    },
  };
}

/** An instance's HTTP surface with a token of the bootstrap client. */
interface Instance {
  server: ChildServer;
  url: string;
  call(method: string, route: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
  token(): Promise<string>;
}

async function connect(server: ChildServer): Promise<Instance> {
  let token: string | undefined;
  const instance: Instance = {
    server,
    url: server.url,
    token: async () => (token ??= await fetchToken(server.url, CLIENT)),
    async call(method, route, body, headers = {}) {
      const json = body !== undefined && typeof body !== 'string';
      const response = await fetch(`${server.url}${route}`, {
        method,
        headers: { authorization: `Bearer ${await instance.token()}`, ...(json ? { 'content-type': 'application/json' } : {}), ...headers },
        ...(body === undefined ? {} : { body: json ? JSON.stringify(body) : (body as string) }),
      });
      const text = await response.text();
      return { status: response.status, body: text && response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
    },
  };
  return instance;
}

async function expectStatus(answer: Promise<{ status: number; body: any }>, statuses: number[]): Promise<any> {
  const { status, body } = await answer;
  assert.ok(statuses.includes(status), `answered ${status}: ${JSON.stringify(body)}`);
  return body;
}

describe('instances starting at once on an empty PostgreSQL schema', function () {
  this.timeout(60_000);

  it('all start (migrations, bootstrap client, signing keys), and a token from one opens every other', async () => {
    const schema = createTestSchema();
    const dirs = Array.from({ length: 4 }, () => fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-start-')));
    const shared = {
      databaseUrl: `${TEST_DATABASE_URL}?schema=${schema.schema}`,
      secretKey: randomBytes(32).toString('base64'),
      bootstrapClients: [`${CLIENT.account}:${CLIENT.id}:${CLIENT.secret}`],
    };
    const started = await Promise.allSettled(dirs.map((dataDir) => createRunloom({ ...shared, dataDir })));
    try {
      assert.deepEqual(started.filter((result) => result.status === 'rejected').map((result) => String(result.reason)), []);
      const instances = started.map((result) => (result as PromiseFulfilledResult<Runloom>).value);
      const token = await instances[0]!.auth.issueToken({ grant_type: 'client_credentials', client_id: CLIENT.id, client_secret: CLIENT.secret });
      for (const instance of instances) {
        const answer = await instance.handle(new Request('http://runloom.test/v1/runnables', { headers: { authorization: `Bearer ${token.access_token}` } }));
        assert.equal(answer.status, 200, await answer.text());
      }
    } finally {
      for (const result of started) if (result.status === 'fulfilled') await result.value.close();
      await schema.drop();
      for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('two instances in one process on one PostgreSQL schema', function () {
  this.timeout(60_000);

  // Each instance keeps the runnables its submissions read (RunnableService.getForWrite): a kept
  // copy must never outlive a change made on the other instance.
  it('a run submitted on B right after the runnable changed or went on A runs what A stored', async () => {
    const schema = createTestSchema();
    const dirs = Array.from({ length: 2 }, () => fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-kept-')));
    const fake = await startFakeVendor('openai');
    const shared = { databaseUrl: `${TEST_DATABASE_URL}?schema=${schema.schema}`, secretKey: randomBytes(32).toString('base64'), allowPrivateNetwork: true };
    const instances: Runloom[] = [];
    try {
      for (const dataDir of dirs) instances.push(await createRunloom({ ...shared, dataDir }));
      const [a, b] = instances as [Runloom, Runloom];
      await a.providers.put(CLIENT.account, fake.provider, { enabled: true, credentials: fake.credentials });
      const config = (content: string) => ({ type: 'prompt', prompt: { messages: [{ role: 'user', content }] }, llms: [{ provider: fake.provider, model: fake.model }] });
      const runnable = await a.runnables.create(CLIENT.account, { name: 'kept', config_content_parsed: config('first') }, CLIENT.id);
      const submitOnB = async (): Promise<string> => {
        const submitted = await b.runs.submit(CLIENT.account, runnable.id, {});
        assert.equal(submitted.mode, 'async');
        return (await b.runs.get(CLIENT.account, submitted.id)).runnable_sha256;
      };
      assert.equal(await submitOnB(), runnable.config_content_sha256);
      assert.equal(await submitOnB(), runnable.config_content_sha256);
      for (const content of ['second', 'third']) {
        const updated = await a.runnables.update(CLIENT.account, runnable.id, { config_content_parsed: config(content) }, CLIENT.id);
        assert.notEqual(updated.config_content_sha256, runnable.config_content_sha256);
        assert.equal(await submitOnB(), updated.config_content_sha256);
        assert.equal(await submitOnB(), updated.config_content_sha256);
      }
      await a.runnables.delete(CLIENT.account, runnable.id);
      await assert.rejects(submitOnB(), (error: unknown) => (error as { code?: string }).code === 'NOT_FOUND');
    } finally {
      for (const instance of instances) await instance.close();
      await fake.close();
      await schema.drop();
      for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  // Each instance keeps the provider configuration its model calls read (ProviderService.keptForRun)
  // for the runs it accepts and starts at once: a run accepted after a change made on the other
  // instance must never use the kept copy.
  it('a run submitted on B right after the provider changed or went on A uses what A stored', async () => {
    const schema = createTestSchema();
    const dirs = Array.from({ length: 2 }, () => fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-kept-')));
    const [first, second] = await Promise.all([startFakeVendor('openai'), startFakeVendor('openai')]);
    const shared = { databaseUrl: `${TEST_DATABASE_URL}?schema=${schema.schema}`, secretKey: randomBytes(32).toString('base64'), allowPrivateNetwork: true };
    const instances: Runloom[] = [];
    try {
      for (const dataDir of dirs) instances.push(await createRunloom({ ...shared, dataDir }));
      const [a, b] = instances as [Runloom, Runloom];
      const provider = first!.provider as 'openai';
      const put = (enabled: boolean, vendor: FakeVendorServer) => a.providers.put(CLIENT.account, provider, { enabled, credentials: vendor.credentials });
      await put(true, first!);
      const runnable = await a.runnables.create(
        CLIENT.account,
        { name: 'kept provider', config_content_parsed: { type: 'prompt', prompt: { messages: [{ role: 'user', content: 'hi' }] }, llms: [{ provider, model: first!.model }] } },
        CLIENT.id,
      );
      /** A sync run on B, and which vendor it called (undefined: none). */
      const runOnB = async (): Promise<{ status: string; error?: string; vendor?: FakeVendorServer }> => {
        const before = [first!.requests.length, second!.requests.length];
        const submitted = await b.runs.submit(CLIENT.account, runnable.id, {}, 'sync');
        assert.equal(submitted.mode, 'sync');
        const { run } = submitted as { run: { status: string; error: { message: string } | null } };
        const vendor = first!.requests.length > before[0]! ? first : second!.requests.length > before[1]! ? second : undefined;
        return { status: run.status, ...(run.error ? { error: run.error.message } : {}), vendor };
      };
      assert.deepEqual(await runOnB(), { status: 'succeeded', vendor: first });
      // B now keeps the configuration, and its runs use it checked rather than read.
      assert.ok(b.providers.keptForRun(CLIENT.account, provider));
      assert.deepEqual(await runOnB(), { status: 'succeeded', vendor: first });
      await put(true, second!);
      assert.deepEqual(await runOnB(), { status: 'succeeded', vendor: second });
      assert.deepEqual(await runOnB(), { status: 'succeeded', vendor: second });
      await put(false, second!);
      assert.match((await runOnB()).error ?? '', /disabled/);
      await put(true, first!);
      assert.deepEqual(await runOnB(), { status: 'succeeded', vendor: first });
      assert.ok(await a.providers.delete(CLIENT.account, provider));
      assert.match((await runOnB()).error ?? '', /not configured/);
      await put(true, second!);
      assert.deepEqual(await runOnB(), { status: 'succeeded', vendor: second });
    } finally {
      for (const instance of instances) await instance.close();
      await Promise.all([first?.close(), second?.close()]);
      await schema.drop();
      for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('several instances on one PostgreSQL database', function () {
  this.timeout(120_000);
  let database: Awaited<ReturnType<typeof createDatabase>>;
  let root: string;
  let fake: FakeVendorServer;
  let s3: S3Server;
  let a: Instance;
  let b: Instance;
  let runnableId: string;

  const serve = (name: string): Promise<ChildServer> => {
    const dataDir = path.join(root, name);
    fs.mkdirSync(dataDir);
    const blobStore = ['--blob-store', `s3://${BUCKET}/shared`, '--s3-endpoint', s3.endpoint];
    return startChildServer(
      serveArgs(dataDir, [
        ...sharedInstanceFlags(database.url, root, secretKey, blobStore),
        '--allow-private-network',
        '--enable-shell-commands',
        '--rate-limit',
        '0',
        ...bootstrapFlag(CLIENT),
      ]),
      root,
      {
        AWS_ACCESS_KEY_ID: S3_CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: S3_CREDENTIALS.secretAccessKey,
        AWS_REGION: 'us-east-1',
        // The SDK's notice that its 2027 releases need Node 22 (the pinned one runs on 20) is not this test's output.
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      },
    );
  };
  const secretKey = randomBytes(32).toString('base64');

  /** Jobs still queued or running in the shared queue. */
  const pendingJobs = async (): Promise<number> => Number((await database.query(`SELECT count(*) AS "n" FROM "jobs" WHERE "status" IN ('queued', 'running')`))[0]!.n);

  const submitRun = async (instance: Instance, callbackUrl: string): Promise<string> =>
    (await expectStatus(instance.call('POST', `/v1/runnable/${runnableId}/runs`, { callback_url: callbackUrl }), [202])).id as string;
  const runStatus = async (instance: Instance, id: string): Promise<string> => (await expectStatus(instance.call('GET', `/v1/run/${id}`), [200])).status as string;

  before(async function () {
    if (!fs.existsSync(RUNLOOM_CLI)) throw new Error(`${RUNLOOM_CLI} is missing: run 'npm run build' first (npm test does)`);
    database = await createDatabase();
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-multi-'));
    fake = await startFakeVendor('openai');
    s3 = await S3Server.start([BUCKET]);
    // Both start at once on the empty database: migrations and the bootstrap client must not race.
    const [first, second] = await Promise.all([serve('a'), serve('b')]);
    [a, b] = await Promise.all([connect(first), connect(second)]);
  });

  after(async () => {
    await Promise.all([a?.server.stop(), b?.server.stop()]);
    await fake?.close();
    await s3?.stop();
    await database?.drop();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('start together on an empty database; each accepts the tokens and provider keys the other issued and stored', async () => {
    const applied = await database.query(`SELECT "id" FROM "_migrations"`);
    assert.ok(applied.length > 0);
    // A token signed by B (keys in the database) opens A.
    const fromB = await fetchToken(b.url, CLIENT);
    const onA = await fetch(`${a.url}/v1/runnables`, { headers: { authorization: `Bearer ${fromB}` } });
    assert.equal(onA.status, 200, await onA.text());
    // Credentials encrypted by B (the shared secret key) are used by A's runs below.
    await expectStatus(b.call('PUT', `/v1/llm-provider/${fake.provider}`, { enabled: true, credentials: fake.credentials }), [200, 201]);
    const runnable = await expectStatus(
      a.call('POST', '/v1/runnables', {
        name: 'multi-instance hello',
        config_content_parsed: { type: 'prompt', prompt: { messages: [{ role: 'user', content: 'Say hello' }] }, llms: [{ provider: fake.provider, model: fake.model }] },
      }),
      [201],
    );
    runnableId = runnable.id;
    assert.equal((await expectStatus(b.call('GET', `/v1/runnable/${runnableId}`), [200])).id, runnableId);
  });

  it('executes runs submitted alternately to A and B exactly once, and sends each callback once', async () => {
    const sink = await CallbackSink.start();
    try {
      fake.reset();
      const count = 20;
      const ids: string[] = [];
      for (let n = 0; n < count; n += 1) ids.push(await submitRun(n % 2 === 0 ? a : b, sink.url));
      await waitUntil(async () => (await Promise.all(ids.map((id) => runStatus(b, id)))).every((status) => status === 'succeeded'), 'every run to succeed', 30_000);
      await sink.waitFor(count, 10_000);
      await waitUntil(async () => (await pendingJobs()) === 0, 'the queue to be empty', 10_000);
      // One model call per run; a second execution would have made another.
      assert.equal(fake.requests.length, count);
      assert.deepEqual(sink.received.map((callback) => (JSON.parse(callback.body) as Json).data.id).sort(), [...ids].sort());
    } finally {
      await sink.close();
    }
  });

  it('keeps a resource uploaded on A in the shared S3 store, and B serves its bytes', async () => {
    const bytes = randomBytes(300_000);
    const form = new FormData();
    form.set('file', new Blob([bytes]), 'shared.bin');
    form.set('name', 'shared.bin');
    const uploaded = await fetch(`${a.url}/v1/resources`, { method: 'POST', headers: { authorization: `Bearer ${await a.token()}` }, body: form });
    assert.equal(uploaded.status, 201, await uploaded.clone().text());
    const { id } = (await uploaded.json()) as Json;
    const content = await fetch(`${b.url}/v1/resource/${id}/content`, { headers: { authorization: `Bearer ${await b.token()}` } });
    assert.equal(content.status, 200);
    assert.ok(Buffer.from(await content.arrayBuffer()).equals(bytes));
    // The bytes are in the bucket under the store's prefix, not in either instance's data dir.
    assert.ok(s3.objectFiles(BUCKET, 'shared/').length > 0);
    assert.ok(!fs.existsSync(path.join(root, 'blobs')));
  });

  it('shows a workspace SSE client on B the file.created of an upload on A', async () => {
    const workspaceId = await createWorkspace(a.url, `Bearer ${await a.token()}`, 'shared files');
    const tokenB = await b.token();
    const received: Json[] = [];
    const source = new EventSource(`${b.url}/workspace/${workspaceId}/events`, {
      fetch: (input, init) => fetch(input, { ...init, headers: { ...init.headers, authorization: `Bearer ${tokenB}` } }),
    });
    try {
      source.addEventListener('workspace-event', (event) => {
        received.push(JSON.parse(event.data) as Json);
      });
      await new Promise<void>((resolve) => source.addEventListener('open', () => resolve()));
      await expectStatus(a.call('POST', `/workspace/${workspaceId}/files?path=notes/from-a.txt`, 'written on A', { 'content-type': 'text/plain' }), [201]);
      await waitUntil(() => received.some((event) => event.type === 'file.created'), 'the SSE client on B to get the file.created', 5000);
      assert.deepEqual(
        received.filter((event) => event.type === 'file.created').map((event) => event.path),
        ['notes/from-a.txt'],
      );
      // The file itself is on the shared volume: B reads what A wrote.
      assert.equal(await expectStatus(b.call('GET', `/workspace/${workspaceId}/file?path=notes/from-a.txt`), [200]), 'written on A');
    } finally {
      source.close();
    }
  });

  it('rejoins from B a thread reply streaming on A, with every chunk', async () => {
    const workspaceId = await createWorkspace(a.url, `Bearer ${await a.token()}`, 'threads');
    await expectStatus(a.call('POST', `/workspace/${workspaceId}/thread/shared/save`, {}), [200, 201]);
    const held = gate();
    fake.reset();
    fake.reply({ type: 'text', chunks: ['Hello', ' from', ' A', ' and', ' B'], gate: held.promise });
    try {
      const started = await fetch(`${a.url}/workspace/${workspaceId}/threads/stream`, {
        method: 'POST',
        headers: { authorization: `Bearer ${await a.token()}`, 'content-type': 'application/json' },
        body: JSON.stringify({ threadId: 'shared', message: 'Hello', model: { provider: fake.provider, model: fake.model } }),
      });
      // Not its body in the message: that would wait for the whole reply.
      assert.equal(started.status, 200);
      await fake.waitForRequests(1);
      // The reply is half sent and held at the vendor: B joins it while it streams.
      const rejoined = await fetch(`${b.url}/workspace/${workspaceId}/threads/stream?threadId=shared`, { headers: { authorization: `Bearer ${await b.token()}` } });
      assert.equal(rejoined.status, 200, 'B sees the stream A runs');
      held.open();
      const [onA, onB] = await Promise.all([readChunks(started.body!), readChunks(rejoined.body!)]);
      assert.equal(textOf(await assemble(onA)), 'Hello from A and B');
      assert.equal(textOf(await assemble(onB)), 'Hello from A and B');
    } finally {
      held.open();
    }
  });

  it('kill -9 of A: B finishes its slow runs, their callbacks and a process run (a prompt task, a wait), and fails its shell command and streaming reply clearly, within 10 s; nothing runs twice', async () => {
    const sink = await CallbackSink.start();
    let orphanGroup: number | undefined;
    try {
      fake.reset();
      // A callback A is delivering when it dies: the sink never answers the first request.
      sink.answer = (n) => (n === 1 ? 'hang' : 200);
      const delivering = await submitRun(a, sink.url);
      await sink.waitFor(1);
      // Three runs and a process prompt task A is executing when it dies: the vendor never answers their calls.
      fake.reset();
      fake.reply({ type: 'hang' }, { type: 'hang' }, { type: 'hang' }, { type: 'hang' });
      const slow = [await submitRun(a, sink.url), await submitRun(a, sink.url), await submitRun(a, sink.url)];
      await fake.waitForRequests(3);
      // A process run with that prompt task and a wait on a timer A set.
      const workspaceId = await createWorkspace(a.url, `Bearer ${await a.token()}`, 'processes');
      const spec = {
        name: 'waits',
        phases: [
          {
            id: 'p1',
            name: 'ask and wait',
            tasks: [
              { id: 'ask', name: 'ask', type: 'prompt', input: { prompt: 'Say hello' } },
              { id: 'pause', name: 'pause', type: 'wait', input: { seconds: 2 } },
            ],
          },
        ],
      };
      const model = { provider: fake.provider, model: fake.model };
      const created = await expectStatus(a.call('POST', `/workspace/${workspaceId}/processes/release/runs`, { spec, inputs: {}, metadata: {}, instructions: '', model }), [201]);
      const processRunId = created.data.id as string;
      await expectStatus(a.call('POST', `/workspace/${workspaceId}/processes/runs/${processRunId}/start`), [200]);
      const processRun = async (instance: Instance) => (await expectStatus(instance.call('GET', `/workspace/${workspaceId}/processes/runs/${processRunId}`), [200])).data as Json;
      const task = (run: Json, id: string) => (run.phases[0].tasks as Json[]).find((entry) => entry.id === id)!;
      await fake.waitForRequests(4);
      assert.equal((await processRun(a)).status, 'running');
      // A thread reply A is streaming: half sent, then the vendor says nothing more.
      fake.reply({ type: 'hang', partial: ['Hello', ' from', ' A', ' and', ' B'] });
      await expectStatus(a.call('POST', `/workspace/${workspaceId}/thread/cut/save`, {}), [200, 201]);
      const streaming = await fetch(`${a.url}/workspace/${workspaceId}/threads/stream`, {
        method: 'POST',
        headers: { authorization: `Bearer ${await a.token()}`, 'content-type': 'application/json' },
        body: JSON.stringify({ threadId: 'cut', message: 'Hello', model }),
      });
      assert.equal(streaming.status, 200);
      await readUntil(streaming.body!.getReader(), '"text-delta"');
      const reply = async (instance: Instance) => (await expectStatus(instance.call('GET', `/workspace/${workspaceId}/thread/cut`), [200])).data.messages[1] as Json;
      // A shell command A is executing: it prints its process group, then sleeps.
      await expectStatus(a.call('POST', `/workspace/${workspaceId}/commands`, { trigger: 'long', type: 'shell', argv: ['sh', '-c', 'echo $$; exec sleep 300'] }), [201]);
      const executionId = (await expectStatus(a.call('POST', `/workspace/${workspaceId}/command/long/execute`, {}), [200])).data.runId as string;
      const execution = async (instance: Instance) => (await expectStatus(instance.call('GET', `/workspace/${workspaceId}/command/long/executions/${executionId}`), [200])).data as Json;
      await waitUntil(async () => /^\d+\n/.test(((await execution(a)).output as string | undefined) ?? ''), 'the shell command to start on A');
      orphanGroup = Number.parseInt((await execution(a)).output as string, 10);

      await a.server.kill();
      const killedAt = Date.now();

      await waitUntil(
        async () => (await Promise.all(slow.map((id) => runStatus(b, id)))).every((status) => status === 'succeeded'),
        'B to finish the runs A was executing',
        FAILOVER_MS,
      );
      await sink.waitFor(2 + slow.length, FAILOVER_MS - (Date.now() - killedAt));
      await waitUntil(async () => (await processRun(b)).status === 'succeeded', 'B to finish the process run', FAILOVER_MS - (Date.now() - killedAt));
      // The reply cannot go on without A's vendor call: B marks it interrupted.
      await waitUntil(async () => (await reply(b)).metadata.status === 'interrupted', 'B to mark the cut reply interrupted', FAILOVER_MS - (Date.now() - killedAt));
      // A shell command is not run again (it may have had effects): B fails it, saying why.
      await waitUntil(async () => (await execution(b)).status === 'failed', 'B to fail the interrupted shell command', FAILOVER_MS - (Date.now() - killedAt));
      assert.equal((await execution(b)).error.code, 'interrupted');
      await waitUntil(async () => (await pendingJobs()) === 0, 'the queue to be empty', FAILOVER_MS);

      // Each interrupted call of a job (three runs, one task) was made again once, by B, and answered once; the reply's was not.
      assert.equal(fake.requests.length, 2 * (slow.length + 1) + 1);
      assert.equal(fake.requests.filter((request) => request.completed).length, slow.length + 1);
      // The callback A was sending is sent again once by B; every other callback once.
      const deliveries = sink.received.map((callback) => (JSON.parse(callback.body) as Json).data.id as string);
      assert.deepEqual([...deliveries].sort(), [delivering, delivering, ...slow].sort());
      const finished = await processRun(b);
      assert.deepEqual([task(finished, 'pause').status, task(finished, 'pause').attempts], ['succeeded', 1]);
      assert.deepEqual([task(finished, 'ask').status, task(finished, 'ask').output], ['succeeded', 'Hello from openai']);
    } finally {
      await sink.close();
      // The command's sleep outlived A in its own process group.
      try {
        if (orphanGroup !== undefined) process.kill(-orphanGroup, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  });
});
