import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { BlobNotFoundError, type BlobStore, BlobTooLargeError } from '../ports/blob-store';

/**
 * The one contract every `BlobStore` adapter passes. `open` makes an empty store and returns how to
 * dispose of it; adapter test files call `blobStoreContract('name', open)` inside mocha.
 */
export function blobStoreContract(name: string, open: () => Promise<{ store: BlobStore; dispose(): Promise<void> }>): void {
  describe(`BlobStore contract: ${name}`, () => {
    let store: BlobStore;
    let dispose: () => Promise<void>;

    beforeEach(async () => {
      ({ store, dispose } = await open());
    });
    afterEach(async () => {
      await dispose();
    });

    it('stores the bytes and reports their sha256 (lowercase hex) and size', async () => {
      const bytes = patterned(300_000);
      const stored = await store.put(streamOf(bytes, 7_000), { maxBytes: 1_000_000 });
      assert.equal(stored.sha256, sha256(bytes));
      assert.match(stored.sha256, /^[0-9a-f]{64}$/);
      assert.equal(stored.size, bytes.byteLength);
      assert.ok(stored.bucket.length > 0);
      assert.deepEqual(await readAll(await store.get(stored.key)), bytes);
      assert.deepEqual(await store.stat(stored.key), { key: stored.key, size: bytes.byteLength });
    });

    it('stores content larger than any internal batch, from many small chunks, intact', async () => {
      const bytes = patterned(3 * 1024 * 1024 + 17);
      const stored = await store.put(streamOf(bytes, 4_096), { maxBytes: bytes.byteLength });
      assert.equal(stored.size, bytes.byteLength);
      assert.equal(sha256(await readAll(await store.get(stored.key))), sha256(bytes));
    });

    it('stores empty content', async () => {
      const stored = await store.put(streamOf(new Uint8Array(0), 1), { maxBytes: 10 });
      assert.equal(stored.size, 0);
      assert.equal(stored.sha256, sha256(new Uint8Array(0)));
      assert.deepEqual(await readAll(await store.get(stored.key)), new Uint8Array(0));
    });

    it('gives every put its own key, derived from the content hash, so a key is never reused', async () => {
      const bytes = patterned(1_000);
      const first = await store.put(streamOf(bytes, 100), { maxBytes: 10_000 });
      const second = await store.put(streamOf(bytes, 100), { maxBytes: 10_000 });
      assert.notEqual(first.key, second.key);
      assert.equal(first.sha256, second.sha256);
      assert.ok(first.key.includes(first.sha256));
      await store.delete(first.key);
      assert.deepEqual(await readAll(await store.get(second.key)), bytes);
    });

    it('reads a byte range, inclusive at both ends', async () => {
      const bytes = patterned(600_000);
      const { key } = await store.put(streamOf(bytes, 65_536), { maxBytes: 1_000_000 });
      assert.deepEqual(await readAll(await store.get(key, { start: 10, end: 19 })), bytes.subarray(10, 20));
      assert.deepEqual(await readAll(await store.get(key, { start: 599_999, end: 599_999 })), bytes.subarray(599_999));
      assert.deepEqual(await readAll(await store.get(key, { start: 1, end: 599_999 })), bytes.subarray(1));
    });

    it('accepts content of exactly maxBytes and refuses one byte more with BlobTooLargeError', async () => {
      const exact = await store.put(streamOf(patterned(1_000), 300), { maxBytes: 1_000 });
      assert.equal(exact.size, 1_000);
      await assert.rejects(store.put(streamOf(patterned(1_001), 300), { maxBytes: 1_000 }), (error: unknown) => {
        assert.ok(error instanceof BlobTooLargeError);
        assert.equal(error.maxBytes, 1_000);
        return true;
      });
    });

    it('cancels the source past maxBytes instead of reading it to its end', async () => {
      let cancelled = false;
      const source = streamOf(patterned(100_000), 300, () => {
        cancelled = true;
      });
      await assert.rejects(store.put(source, { maxBytes: 1_000 }), BlobTooLargeError);
      assert.ok(cancelled);
    });

    it('rejects a put whose source fails part-way', async () => {
      const failing = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(patterned(2_000));
          controller.error(new Error('client went away'));
        },
      });
      await assert.rejects(store.put(failing, { maxBytes: 10_000 }), /client went away/);
    });

    it('answers a missing key: get rejects with BlobNotFoundError, stat is undefined, delete succeeds', async () => {
      const { key } = await store.put(streamOf(patterned(10), 10), { maxBytes: 10 });
      await store.delete(key);
      await assert.rejects(store.get(key), BlobNotFoundError);
      assert.equal(await store.stat(key), undefined);
      await store.delete(key);
    });

    it('keeps concurrent puts of the same content apart', async () => {
      const bytes = patterned(200_000);
      const stored = await Promise.all([1, 2, 3].map(() => store.put(streamOf(bytes, 9_999), { maxBytes: 200_000 })));
      assert.equal(new Set(stored.map((blob) => blob.key)).size, 3);
      for (const blob of stored) assert.equal(sha256(await readAll(await store.get(blob.key))), sha256(bytes));
    });
  });
}

/** Bytes that differ at every offset a slicing mistake could land on. */
export function patterned(size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  for (let index = 0; index < size; index += 1) bytes[index] = (index * 31 + (index >> 8)) & 0xff;
  return bytes;
}

export function streamOf(bytes: Uint8Array, chunkSize: number, onCancel?: () => void): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.byteLength) {
        controller.close();
        return;
      }
      controller.enqueue(bytes.slice(offset, offset + chunkSize));
      offset += chunkSize;
    },
    cancel() {
      onCancel?.();
    },
  });
}

export async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
  return new Uint8Array(Buffer.concat(chunks));
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}
