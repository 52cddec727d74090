import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BlobNotFoundError, BlobTooLargeError } from '../../ports/blob-store';
import { blobStoreContract, patterned, streamOf } from '../blob-store.contract';
import { LocalDiskBlobStore } from './local-disk-blob-store';

function tempRoot(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-blobs-'));
}

blobStoreContract('local disk', async () => {
  const root = tempRoot();
  return { store: new LocalDiskBlobStore(root), dispose: async () => fs.rmSync(root, { recursive: true, force: true }) };
});

describe('LocalDiskBlobStore', () => {
  let root: string;
  let store: LocalDiskBlobStore;
  beforeEach(() => {
    root = tempRoot();
    store = new LocalDiskBlobStore(root);
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('keeps blobs in directories sharded by hash prefix, with bucket "local"', async () => {
    const stored = await store.put(streamOf(patterned(5_000), 1_000), { maxBytes: 5_000 });
    assert.equal(stored.bucket, 'local');
    assert.match(stored.key, new RegExp(`^${stored.sha256.slice(0, 2)}/${stored.sha256.slice(2, 4)}/${stored.sha256}-[0-9a-f]{16}$`));
    assert.equal(fs.statSync(path.join(root, stored.key)).size, 5_000);
    assert.deepEqual(fs.readdirSync(path.join(root, 'tmp')), []);
  });

  it('leaves no temporary file behind when a put goes over the limit or its source fails', async () => {
    await assert.rejects(store.put(streamOf(patterned(3 * 1024 * 1024), 64 * 1024), { maxBytes: 2 * 1024 * 1024 }), BlobTooLargeError);
    const failing = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(patterned(1_500_000));
        controller.error(new Error('reset'));
      },
    });
    await assert.rejects(store.put(failing, { maxBytes: 10_000_000 }), /reset/);
    assert.deepEqual(fs.readdirSync(path.join(root, 'tmp')), []);
    assert.deepEqual(
      fs.readdirSync(root).filter((entry) => entry !== 'tmp'),
      [],
    );
  });

  it('removes the file on delete', async () => {
    const stored = await store.put(streamOf(patterned(100), 100), { maxBytes: 100 });
    await store.delete(stored.key);
    assert.equal(fs.existsSync(path.join(root, stored.key)), false);
  });

  it('sweeps temporary files that a crash left behind an hour ago, and keeps recent ones', async () => {
    const tempDir = path.join(root, 'tmp');
    fs.mkdirSync(tempDir, { recursive: true });
    const stale = path.join(tempDir, 'stale');
    const recent = path.join(tempDir, 'recent');
    fs.writeFileSync(stale, 'half');
    fs.writeFileSync(recent, 'in flight');
    const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
    fs.utimesSync(stale, twoHoursAgo, twoHoursAgo);
    await store.put(streamOf(patterned(10), 10), { maxBytes: 10 });
    assert.deepEqual(fs.readdirSync(tempDir), ['recent']);
  });

  it('refuses keys that are not its own, so no path escapes the root', async () => {
    fs.writeFileSync(path.join(root, 'secret'), 'outside');
    await assert.rejects(store.get('../secret'), BlobNotFoundError);
    await assert.rejects(store.get('secret'), BlobNotFoundError);
    await assert.rejects(store.delete('../../etc/passwd'), BlobNotFoundError);
    assert.ok(fs.existsSync(path.join(root, 'secret')));
  });
});
