import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { EventSource } from 'eventsource';
import { ContainerModule } from 'inversify';
import { Clock, createRunloom, DEFAULT_SSE_SETTINGS, Logger, SseSettings, type CreateRunloomOptions, type PublishedWorkspaceEvent, type Runloom } from '../packages/core/src/index';
import { ManualClock } from '../packages/core/src/testing/manual-clock';
import { RecordingLogger } from '../packages/core/src/testing/recording-logger';
import { createTestSchema, TEST_DATABASE_URL } from '../packages/core/test-support/postgres-test-store';
import { listen, type ListeningServer } from '../packages/server-adapter/src/serve';
import { waitUntil } from './support/wait';

/**
 * docs/api.md#workspace-events: `GET /workspace/{id}/events` through a real server on loopback,
 * read by the `eventsource` npm client (what browsers' EventSource does, with a bearer header) and
 * by raw HTTP where the test needs to see the bytes or not read them at all.
 */

const ACCOUNT = 'acct-events';
const CLIENT = { id: 'events-client', secret: 'events-client-secret-0123456789' };

/** Quick reconnects, so the client's own retry after a restart does not hold the test up. */
const fastRetry = new ContainerModule(({ rebind }) => {
  rebind(SseSettings).toConstantValue({ ...DEFAULT_SSE_SETTINGS, retryMs: 20 });
});

interface Instance {
  runloom: Runloom;
  url: string;
  port: number;
  /** A bearer token of the test account, issued once per instance. */
  token(): Promise<string>;
  /** Stops the server and closes Runloom (the data dir and the database stay). */
  stop(): Promise<void>;
}

/**
 * Runloom served on loopback (`port` 0: a free one), with the test's client bootstrapped;
 * `beforeListen` runs once it is started, before it accepts a connection.
 */
async function serve(options: CreateRunloomOptions, port = 0, beforeListen?: (runloom: Runloom) => Promise<void>): Promise<Instance> {
  const runloom = await createRunloom({ ...options, bootstrapClients: [`${ACCOUNT}:${CLIENT.id}:${CLIENT.secret}`], modules: [fastRetry, ...(options.modules ?? [])] });
  let server: ListeningServer;
  try {
    await beforeListen?.(runloom);
    server = await listen(runloom, { host: '127.0.0.1', port, shutdownGraceMs: 1_000 });
  } catch (error) {
    await runloom.close();
    throw error;
  }
  let token: Promise<string> | undefined;
  return {
    runloom,
    url: server.url,
    port: Number(new URL(server.url).port),
    token: () => (token ??= runloom.auth.issueToken({ grant_type: 'client_credentials', client_id: CLIENT.id, client_secret: CLIENT.secret }).then((issued) => issued.access_token)),
    async stop() {
      await server.stop();
      await runloom.close();
    },
  };
}

interface Received {
  id: string;
  data: Record<string, unknown>;
}

/** An `eventsource` client of a workspace's stream, collecting its `workspace-event`s. */
class Follower {
  readonly events: Received[] = [];
  readonly source: EventSource;
  private waiters: Array<() => void> = [];

  constructor(url: string, token: () => Promise<string>) {
    this.source = new EventSource(url, {
      fetch: async (input, init) => fetch(input, { ...init, headers: { ...init.headers, authorization: `Bearer ${await token()}` } }),
    });
    this.source.addEventListener('workspace-event', (event) => {
      this.events.push({ id: event.lastEventId, data: JSON.parse(event.data) as Record<string, unknown> });
      for (const waiter of this.waiters.splice(0)) waiter();
    });
  }

  /** Resolves once `count` events have arrived. */
  async received(count: number): Promise<Received[]> {
    while (this.events.length < count) await new Promise<void>((resolve) => this.waiters.push(resolve));
    return this.events;
  }

  ids(): number[] {
    return this.events.map((event) => Number(event.id));
  }

  close(): void {
    this.source.close();
  }
}

/** The stream read as raw bytes through fetch: its head, and the frames as they come. */
async function openRaw(url: string, token: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}`, ...headers }, signal: controller.signal });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  return {
    response,
    /** The next complete frame (up to its blank line), comments included. */
    async frame(): Promise<string> {
      for (;;) {
        const end = buffered.indexOf('\n\n');
        if (end >= 0) {
          const frame = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          return frame;
        }
        const { done, value } = await reader.read();
        if (done) throw new Error('the stream ended');
        buffered += decoder.decode(value, { stream: true });
      }
    },
    close: () => controller.abort(),
  };
}

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-events-'));
}

describe('workspace events (GET /workspace/{id}/events)', function () {
  this.timeout(60_000);
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A server on a fresh data dir, and a workspace of the test account on it. */
  async function started(options: CreateRunloomOptions = {}) {
    const dataDir = tempDir();
    cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const instance = await serve({ ...options, dataDir });
    let stopped = false;
    cleanups.push(() => (stopped ? undefined : instance.stop()));
    const workspace = await instance.runloom.workspaces.create(ACCOUNT, { name: 'events' }, CLIENT.id);
    return {
      instance,
      dataDir,
      workspace,
      streamUrl: `${instance.url}/workspace/${workspace.id}/events`,
      async stop() {
        stopped = true;
        await instance.stop();
      },
    };
  }

  function follow(url: string, token: () => Promise<string>): Follower {
    const follower = new Follower(url, token);
    cleanups.push(() => follower.close());
    return follower;
  }

  it('streams each event as a workspace-event frame, in order, with ids increasing per workspace', async () => {
    const { instance, workspace, streamUrl } = await started();
    const raw = await openRaw(streamUrl, await instance.token());
    cleanups.push(raw.close);
    assert.equal(raw.response.status, 200);
    assert.equal(raw.response.headers.get('content-type'), 'text/event-stream');
    assert.equal(raw.response.headers.get('cache-control'), 'no-cache, no-transform');
    assert.equal(raw.response.headers.get('x-accel-buffering'), 'no');
    assert.match(await raw.frame(), /^retry: \d+$/, 'the stream opens with its reconnection delay, before any event');

    const follower = follow(streamUrl, instance.token);
    await new Promise<void>((resolve) => follower.source.addEventListener('open', () => resolve()));
    const published: PublishedWorkspaceEvent[] = [];
    for (const event of [{ type: 'file.created', path: 'a.txt' }, { type: 'file.updated', path: 'a.txt' }, { type: 'directory.created', path: 'docs' }]) {
      published.push(await instance.runloom.workspaceEvents.publish(workspace.id, event));
    }
    const received = await follower.received(3);
    assert.deepEqual(received.map((event) => event.data), [
      { type: 'file.created', path: 'a.txt' },
      { type: 'file.updated', path: 'a.txt' },
      { type: 'directory.created', path: 'docs' },
    ]);
    assert.deepEqual(follower.ids(), published.map((event) => event.id));
    assert.ok(follower.ids().every((id, index, ids) => index === 0 || id > ids[index - 1]!), `ids increase: ${follower.ids().join(', ')}`);
    assert.equal(await raw.frame(), `event: workspace-event\nid: ${published[0]!.id}\ndata: {"type":"file.created","path":"a.txt"}`);

    // Another workspace numbers its own events.
    const other = await instance.runloom.workspaces.create(ACCOUNT, { name: 'other' }, CLIENT.id);
    const otherFollower = follow(`${instance.url}/workspace/${other.id}/events`, instance.token);
    await new Promise<void>((resolve) => otherFollower.source.addEventListener('open', () => resolve()));
    const otherEvent = await instance.runloom.workspaceEvents.publish(other.id, { type: 'file.created', path: 'b.txt' });
    assert.deepEqual((await otherFollower.received(1)).map((event) => event.data), [{ type: 'file.created', path: 'b.txt' }]);
    assert.equal(otherFollower.ids()[0], otherEvent.id);
    assert.equal(follower.events.length, 3, 'the first workspace’s stream got nothing of the other');
  });

  it('replays exactly the missed events after Last-Event-ID (header or lastEventId query), then goes on live', async () => {
    const { instance, workspace, streamUrl } = await started();
    const ids: number[] = [];
    for (let n = 1; n <= 5; n += 1) ids.push((await instance.runloom.workspaceEvents.publish(workspace.id, { type: 'file.updated', path: `f${n}` })).id);

    const byHeader = await openRaw(streamUrl, await instance.token(), { 'last-event-id': String(ids[2]) });
    cleanups.push(byHeader.close);
    await byHeader.frame();
    assert.match(await byHeader.frame(), new RegExp(`^event: workspace-event\nid: ${ids[3]}\ndata: .*"f4"`));
    assert.match(await byHeader.frame(), new RegExp(`^event: workspace-event\nid: ${ids[4]}\ndata: .*"f5"`));

    const byQuery = follow(`${streamUrl}?lastEventId=${ids[1]}`, instance.token);
    assert.deepEqual((await byQuery.received(3)).map((event) => event.data.path), ['f3', 'f4', 'f5']);
    const live = await instance.runloom.workspaceEvents.publish(workspace.id, { type: 'file.deleted', path: 'f1' });
    await byQuery.received(4);
    assert.deepEqual(byQuery.ids(), [ids[2], ids[3], ids[4], live.id], 'each missed event once, then the live one');
    assert.match(await byHeader.frame(), new RegExp(`^event: workspace-event\nid: ${live.id}\n`));
  });

  it('replays what a client missed across a server restart on the same data dir, with the ids numbering on', async () => {
    const { instance, dataDir, workspace, streamUrl, stop } = await started();
    // The token outlives the restart: the signing key is kept in the data dir.
    const token = await instance.token();
    const follower = follow(streamUrl, async () => token);
    await new Promise<void>((resolve) => follower.source.addEventListener('open', () => resolve()));
    await instance.runloom.workspaceEvents.publish(workspace.id, { type: 'file.created', path: 'before.txt' });
    await follower.received(1);
    await stop();

    // Published before the new server listens, so the client can only get them by replay from the store.
    const missed: PublishedWorkspaceEvent[] = [];
    // The same address, so the eventsource client reconnects by itself, sending its Last-Event-ID.
    const restarted = await serve({ dataDir }, instance.port, async (runloom) => {
      for (const name of ['during-1.txt', 'during-2.txt']) missed.push(await runloom.workspaceEvents.publish(workspace.id, { type: 'file.created', path: name }));
    });
    cleanups.push(() => restarted.stop());
    assert.equal(missed[0]!.id, Number(follower.events[0]!.id) + 1, 'the numbering survived the restart');
    await follower.received(3);
    assert.deepEqual(follower.events.map((event) => event.data.path), ['before.txt', 'during-1.txt', 'during-2.txt']);
    assert.deepEqual(follower.ids().slice(1), missed.map((event) => event.id));
  });

  it('on PostgreSQL, replays from another instance what one published, with the same ids, and numbers their publishes apart', async () => {
    const schema = createTestSchema();
    cleanups.push(() => schema.drop());
    const shared = { databaseUrl: `${TEST_DATABASE_URL}?schema=${schema.schema}`, secretKey: randomBytes(32).toString('base64') };
    const first = await started(shared);
    const secondDir = tempDir();
    cleanups.push(() => fs.rmSync(secondDir, { recursive: true, force: true }));
    const second = await serve({ ...shared, dataDir: secondDir });
    cleanups.push(() => second.stop());
    const { workspace } = first;

    const onFirst: PublishedWorkspaceEvent[] = [];
    for (const name of ['a', 'b', 'c']) onFirst.push(await first.instance.runloom.workspaceEvents.publish(workspace.id, { type: 'file.created', path: name }));
    const follower = follow(`${second.url}/workspace/${workspace.id}/events?lastEventId=${onFirst[0]!.id}`, second.token);
    await follower.received(2);
    assert.deepEqual(follower.events.map((event) => event.data.path), ['b', 'c']);
    assert.deepEqual(follower.ids(), [onFirst[1]!.id, onFirst[2]!.id]);

    // Both instances publishing at once never give two events one id.
    const together = await Promise.all([
      ...Array.from({ length: 10 }, (_, n) => first.instance.runloom.workspaceEvents.publish(workspace.id, { type: 'file.updated', path: `first-${n}` })),
      ...Array.from({ length: 10 }, (_, n) => second.runloom.workspaceEvents.publish(workspace.id, { type: 'file.updated', path: `second-${n}` })),
    ]);
    const ids = together.map((event) => event.id).sort((x, y) => x - y);
    assert.deepEqual(ids, Array.from({ length: 20 }, (_, n) => onFirst[2]!.id + 1 + n));
    // The follower on the second instance gets them all, in order, once: its own live, and the first's
    // read from the store before the next event of its own instance (live wake-ups across instances
    // come with LISTEN/NOTIFY).
    const last = await second.runloom.workspaceEvents.publish(workspace.id, { type: 'file.deleted', path: 'a' });
    await follower.received(23);
    assert.deepEqual(follower.ids().slice(2), [...ids, last.id]);
  });

  it('sends a heartbeat comment every 15 s of the Clock, until the client goes away', async () => {
    const clock = new ManualClock();
    const { instance, streamUrl } = await started({ modules: [new ContainerModule(({ rebind }) => void rebind(Clock).toConstantValue(clock))] });
    const heartbeatSet = clock.timerSet((timer) => timer.interval && timer.delayMs === 15_000);
    const raw = await openRaw(streamUrl, await instance.token());
    cleanups.push(raw.close);
    await raw.frame();
    const heartbeat = await heartbeatSet;
    await clock.advance(heartbeat.dueMs - clock.now().getTime());
    assert.equal(await raw.frame(), ': heartbeat');
    await clock.advance(15_000);
    assert.equal(await raw.frame(), ': heartbeat');
    // The client goes away: its stream ends, and with it the heartbeat timer and the subscription.
    raw.close();
    await waitUntil(() => !clock.pending.some((timer) => timer.interval && timer.delayMs === 15_000), 'the heartbeat timer is cancelled');
  });

  it('drops a client that stops reading past its buffer limit, while a reading client keeps receiving everything', async () => {
    const logger = new RecordingLogger();
    const { instance, workspace, streamUrl } = await started({
      modules: [
        new ContainerModule(({ rebind }) => {
          rebind(Logger).toConstantValue(logger);
          rebind(SseSettings).toConstantValue({ ...DEFAULT_SSE_SETTINGS, retryMs: 20, maxBufferedBytes: 64 * 1024 });
        }),
      ],
    });
    const token = await instance.token();
    const fast = follow(streamUrl, instance.token);
    await new Promise<void>((resolve) => fast.source.addEventListener('open', () => resolve()));

    // A raw HTTP client that sends its request and then reads nothing.
    const slow = net.connect(instance.port, '127.0.0.1');
    cleanups.push(() => void slow.destroy());
    await new Promise<void>((resolve) => slow.once('connect', resolve));
    const drops = (): number => logger.lines.filter((line) => line.message.startsWith('dropped a workspace event stream client')).length;
    slow.write(`GET /workspace/${workspace.id}/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n\r\n`);
    slow.pause();
    const closedByServer = new Promise<void>((resolve) => slow.once('close', () => resolve()));

    // Large events fill the socket buffers of the client that does not read, then its stream's own.
    const padding = 'x'.repeat(32 * 1024);
    let published = 0;
    while (drops() === 0) {
      assert.ok(published < 2_000, 'the slow client was never dropped');
      await instance.runloom.workspaceEvents.publish(workspace.id, { type: 'file.updated', path: `big-${published}`, padding });
      published += 1;
    }
    assert.deepEqual(logger.lines.find((line) => line.message.startsWith('dropped'))!.fields, { workspaceId: workspace.id, accountId: ACCOUNT });
    await instance.runloom.workspaceEvents.publish(workspace.id, { type: 'file.deleted', path: 'after-the-drop' });
    const received = await fast.received(published + 1);
    assert.deepEqual(received.map((event) => event.data.path), [...Array.from({ length: published }, (_, n) => `big-${n}`), 'after-the-drop']);
    // Once it reads again, the slow client finds its connection closed by the server.
    slow.resume();
    await closedByServer;
  });

  it('streams the events the workspace routes publish once their changes are durable (lifecycle, files)', async () => {
    const { instance, workspace, streamUrl } = await started();
    const token = await instance.token();
    const follower = follow(streamUrl, async () => token);
    await new Promise<void>((resolve) => follower.source.addEventListener('open', () => resolve()));
    const call = (route: string, init: RequestInit) =>
      fetch(`${instance.url}/workspace/${workspace.id}${route}`, { ...init, headers: { authorization: `Bearer ${token}`, ...init.headers } });
    const opened = await call('/lifecycle-events', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ event: 'opened' }) });
    assert.equal(opened.status, 201, await opened.clone().text());
    const uploaded = await call('/files?path=notes/a.txt', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' });
    assert.equal(uploaded.status, 201, await uploaded.clone().text());
    const received = await follower.received(2);
    assert.deepEqual(
      received.map((event) => [event.data.type, event.data.event ?? event.data.path]),
      [['workspace.lifecycle', 'opened'], ['file.created', 'notes/a.txt']],
    );
  });

  it('answers 404 for another account’s workspace, 400 for a Last-Event-ID that is not an id, and HEAD without a stream', async () => {
    const { instance, streamUrl } = await started();
    const foreign = await instance.runloom.workspaces.create('acct-someone-else', { name: 'not yours' }, 'someone-else');
    const token = await instance.token();
    const other = await fetch(`${instance.url}/workspace/${foreign.id}/events`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(other.status, 404);
    assert.match(await other.text(), /not found/);
    const bad = await fetch(streamUrl, { headers: { authorization: `Bearer ${token}`, 'last-event-id': 'abc' } });
    assert.equal(bad.status, 400);
    assert.match(await bad.text(), /Last-Event-ID must be/);
    const badQuery = await fetch(`${streamUrl}?lastEventId=-1`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(badQuery.status, 400);
    assert.match(await badQuery.text(), /lastEventId must be a plain decimal integer/);
    assert.equal((await fetch(streamUrl)).status, 401);
    // HEAD answers the stream's head and ends at once.
    const head = await fetch(streamUrl, { method: 'HEAD', headers: { authorization: `Bearer ${token}` } });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-type'), 'text/event-stream');
  });
});
