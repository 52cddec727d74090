import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { syncDirectory } from './durable-file-io';

describe('syncDirectory', () => {
  let root: string;
  const realOpen = fs.open;
  const realFsync = fs.fsync;
  /** Each sync of a directory as it happens: when it started, and a way to let it finish. */
  let started: Array<{ directory: string; finish(): void }>;
  /** Directories opened for a sync, in order. */
  let opened: string[];

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-sync-directory-'));
    started = [];
    opened = [];
    // Holds each directory sync until the test lets it finish, so the test decides what overlaps.
    const directoryOf = new Map<number, string>();
    fs.open = ((file: fs.PathLike, flags: fs.OpenMode, callback: (error: NodeJS.ErrnoException | null, fd: number) => void) =>
      realOpen(file, flags, (error, fd) => {
        if (!error && flags === 'r') {
          opened.push(String(file));
          directoryOf.set(fd, String(file));
        }
        callback(error, fd);
      })) as typeof fs.open;
    fs.fsync = ((fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => {
      const directory = directoryOf.get(fd);
      if (directory === undefined) return realFsync(fd, callback);
      started.push({ directory, finish: () => realFsync(fd, callback) });
    }) as typeof fs.fsync;
  });

  afterEach(() => {
    fs.open = realOpen;
    fs.fsync = realFsync;
    fs.rmSync(root, { recursive: true, force: true });
  });

  /** Resolves once `count` directory syncs have started. */
  async function syncsStarted(count: number): Promise<void> {
    while (started.length < count) await new Promise((resolve) => setImmediate(resolve));
  }

  it('gives the callers that come while a sync runs one sync between them, started after that one ends', async () => {
    const settled: string[] = [];
    const first = syncDirectory(root).then(() => settled.push('first'));
    await syncsStarted(1);
    // These come after the running sync started: it may not cover their changes.
    const joiners = [syncDirectory(root), syncDirectory(root), syncDirectory(root)].map((sync, index) => sync.then(() => settled.push(`joiner ${index}`)));
    started[0]!.finish();
    await first;
    await syncsStarted(2);
    assert.deepEqual(settled, ['first'], 'the joiners wait for a sync of their own');
    started[1]!.finish();
    await Promise.all(joiners);
    assert.equal(started.length, 2, 'three joiners, one sync');
    assert.deepEqual(started.map((sync) => sync.directory), [root, root]);
  });

  it('shares a sync with the callers that come while it still opens the directory: its fsync comes after their changes', async () => {
    const callers = [syncDirectory(root), syncDirectory(root), syncDirectory(root)];
    await syncsStarted(1);
    started[0]!.finish();
    await Promise.all(callers);
    assert.equal(started.length, 1, 'three callers before the fsync, one sync');
  });

  it('starts a new sync for a call after the last one ended, and syncs other directories apart', async () => {
    const other = path.join(root, 'other');
    fs.mkdirSync(other);
    const first = syncDirectory(root);
    const elsewhere = syncDirectory(other);
    await syncsStarted(2);
    started.forEach((sync) => sync.finish());
    await Promise.all([first, elsewhere]);
    const again = syncDirectory(root);
    await syncsStarted(3);
    started[2]!.finish();
    await again;
    // The two directories open concurrently: either may start its sync first.
    assert.deepEqual(started.slice(0, 2).map((sync) => sync.directory).sort(), [root, other].sort());
    assert.equal(started[2]!.directory, root);
  });

  it('fails the callers of a sync that fails, and the next call syncs again', async () => {
    const missing = path.join(root, 'gone');
    await assert.rejects(syncDirectory(missing), { code: 'ENOENT' });
    await assert.rejects(syncDirectory(missing), { code: 'ENOENT' });
    const later = syncDirectory(root);
    await syncsStarted(1);
    started[0]!.finish();
    await later;
  });

  describe('with a change still under way', () => {
    function deferred(): { promise: Promise<void>; resolve(): void; reject(error: Error): void } {
      let resolve!: () => void;
      let reject!: (error: Error) => void;
      const promise = new Promise<void>((done, fail) => ((resolve = done), (reject = fail)));
      return { promise, resolve, reject };
    }
    async function openedCount(count: number): Promise<void> {
      while (opened.length < count) await new Promise((resolve) => setImmediate(resolve));
    }

    it('opens the directory meanwhile and asks for the fsync only once the change is done', async () => {
      const rename = deferred();
      const sync = syncDirectory(root, rename.promise);
      await openedCount(1);
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(started.length, 0, 'no fsync before the change is done');
      rename.resolve();
      await syncsStarted(1);
      started[0]!.finish();
      await sync;
    });

    it('shares the sync with changes that come while it opens; one that comes once it is open waits for the next', async () => {
      const first = deferred();
      const second = deferred();
      const late = deferred();
      const syncs = [syncDirectory(root, first.promise), syncDirectory(root, second.promise)];
      await openedCount(1);
      const next = syncDirectory(root, late.promise);
      first.resolve();
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(started.length, 0, 'the fsync waits for every change that joined');
      second.resolve();
      await syncsStarted(1);
      started[0]!.finish();
      await Promise.all(syncs);
      late.resolve();
      await syncsStarted(2);
      started[1]!.finish();
      await next;
      assert.equal(started.length, 2);
    });

    it('goes on with the sync when a change fails: that failure is its caller’s', async () => {
      const failed = deferred();
      const sync = syncDirectory(root, failed.promise);
      failed.reject(new Error('EEXIST'));
      await syncsStarted(1);
      started[0]!.finish();
      await sync;
    });
  });
});
