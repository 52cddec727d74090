import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import net from 'node:net';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { S3_CREDENTIALS, S3Server } from '../../../../../test/support/s3-server';
import { BlobNotFoundError, BlobTooLargeError } from '../../ports/blob-store';
import { blobStoreContract, patterned, readAll, streamOf } from '../blob-store.contract';
import { MIN_PART_BYTES, S3BlobStore, S3RequestError } from './s3-blob-store';

const BUCKET = 'runloom-test';

describe('S3BlobStore against s3rver', () => {
  let server: S3Server;
  let prefixes = 0;
  /** A store under a prefix of its own, so tests see only their own objects. */
  const openStore = (options: Partial<ConstructorParameters<typeof S3BlobStore>[0]> = {}): { store: S3BlobStore; prefix: string } => {
    prefixes += 1;
    const prefix = `test-${prefixes}/blobs/`;
    return { prefix, store: new S3BlobStore({ bucket: BUCKET, prefix, endpoint: server.endpoint, credentials: S3_CREDENTIALS, ...options }) };
  };

  before(async () => {
    server = await S3Server.start([BUCKET]);
  });
  after(async () => {
    await server.stop();
  });

  blobStoreContract('S3 (s3rver)', async () => {
    const { store } = openStore();
    return { store, dispose: () => store.close() };
  });

  describe('S3BlobStore', () => {
    let store: S3BlobStore;
    let prefix: string;
    beforeEach(() => {
      ({ store, prefix } = openStore());
    });
    afterEach(() => store.close());

    it('keeps a blob as one object under the prefix, keyed by its hash, in the named bucket', async () => {
      const stored = await store.put(streamOf(patterned(5_000), 1_000), { maxBytes: 5_000 });
      assert.equal(stored.bucket, BUCKET);
      assert.match(stored.key, new RegExp(`^${stored.sha256.slice(0, 2)}/${stored.sha256.slice(2, 4)}/${stored.sha256}-[0-9a-f]{16}$`));
      assert.deepEqual(server.objectFiles(BUCKET, prefix), [prefix + stored.key]);
    });

    it('streams a body over one part as a multipart upload, then keeps only the final object', async () => {
      const bytes = patterned(2 * MIN_PART_BYTES + 12_345);
      const stored = await store.put(streamOf(bytes, 64 * 1024), { maxBytes: bytes.byteLength });
      assert.equal(stored.size, bytes.byteLength);
      assert.equal(stored.sha256, sha256(bytes));
      assert.deepEqual(server.objectFiles(BUCKET, prefix), [prefix + stored.key]);
      assert.deepEqual(await readAll(await store.get(stored.key, { start: MIN_PART_BYTES - 5, end: MIN_PART_BYTES + 4 })), bytes.subarray(MIN_PART_BYTES - 5, MIN_PART_BYTES + 5));
    });

    it('refuses a multipart body past maxBytes, cancels its source and keeps no object', async () => {
      let cancelled = false;
      const source = streamOf(patterned(3 * MIN_PART_BYTES), 64 * 1024, () => {
        cancelled = true;
      });
      await assert.rejects(store.put(source, { maxBytes: MIN_PART_BYTES + MIN_PART_BYTES / 2 }), BlobTooLargeError);
      assert.ok(cancelled);
      assert.deepEqual(server.objectFiles(BUCKET, prefix), []);
    });

    it('answers the source’s own failure when it breaks after the first part, and keeps no object', async () => {
      const failing = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(patterned(MIN_PART_BYTES + 1_000));
          controller.error(new Error('client went away'));
        },
      });
      await assert.rejects(store.put(failing, { maxBytes: 100 * MIN_PART_BYTES }), /client went away/);
      assert.deepEqual(server.objectFiles(BUCKET, prefix), []);
    });

    it('sweeps temporary objects that a crash left behind an hour ago, and keeps recent ones', async () => {
      const client = new S3Client({ endpoint: server.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: S3_CREDENTIALS });
      for (const name of ['stale', 'recent']) await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${prefix}tmp/${name}`, Body: 'half' }));
      client.destroy();
      server.age(BUCKET, `${prefix}tmp/stale`, new Date(Date.now() - 2 * 60 * 60 * 1000));
      const stored = await store.put(streamOf(patterned(10), 10), { maxBytes: 10 });
      assert.deepEqual(server.objectFiles(BUCKET, `${prefix}tmp/`), [`${prefix}tmp/recent`]);
      assert.deepEqual(server.objectFiles(BUCKET, prefix), [prefix + stored.key, `${prefix}tmp/recent`].sort());
    });

    it('refuses keys that are not its own, so no request leaves the prefix', async () => {
      await assert.rejects(store.get('../other/key'), BlobNotFoundError);
      await assert.rejects(store.get('secret'), BlobNotFoundError);
      await assert.rejects(store.delete('../../x'), BlobNotFoundError);
    });

    it('refuses a part size under S3’s minimum', () => {
      assert.throws(() => new S3BlobStore({ bucket: BUCKET, prefix: '', endpoint: server.endpoint, partSize: 1024 }), /at least 5242880 bytes/);
    });
  });

  describe('failed requests', () => {
    it('are S3RequestErrors naming the operation and the service’s code, without the credentials', async () => {
      const credentials = { accessKeyId: 'AKIAUNKNOWN7Q2W', secretAccessKey: 'not-a-secret-s3rver-knows-3f9a' };
      const store = new S3BlobStore({ bucket: BUCKET, prefix: 'refused/', endpoint: server.endpoint, credentials });
      try {
        await assert.rejects(store.put(streamOf(patterned(100), 100), { maxBytes: 100 }), (error: unknown) => {
          assert.ok(error instanceof S3RequestError);
          assert.equal(error.operation, 'PutObject');
          assert.equal(error.code, 'InvalidAccessKeyId');
          assert.equal(error.status, 403);
          assert.match(error.message, /^S3 PutObject of [0-9a-f/]+-[0-9a-f]{16} failed: InvalidAccessKeyId \(HTTP 403\): the service does not know AWS_ACCESS_KEY_ID$/);
          assert.equal(error.cause, undefined);
          const everything = JSON.stringify({ ...error, message: error.message, stack: error.stack });
          for (const value of Object.values(credentials)) assert.ok(!everything.includes(value));
          return true;
        });
      } finally {
        await store.close();
      }
    });

    it('say when nothing answers at the endpoint', async () => {
      const port = await closedPort();
      const store = new S3BlobStore({ bucket: BUCKET, prefix: '', endpoint: `http://127.0.0.1:${port}`, credentials: S3_CREDENTIALS });
      try {
        await assert.rejects(store.stat(`aa/bb/${'a'.repeat(64)}-${'0'.repeat(16)}`), (error: unknown) => {
          assert.ok(error instanceof S3RequestError);
          assert.equal(error.code, 'ECONNREFUSED');
          assert.equal(error.status, undefined);
          assert.match(error.message, /HeadObject .* failed: ECONNREFUSED: nothing answers at the S3 endpoint/);
          return true;
        });
      } finally {
        await store.close();
      }
    });

    it('say when the bucket does not exist', async () => {
      const store = new S3BlobStore({ bucket: 'no-such-bucket', prefix: '', endpoint: server.endpoint, credentials: S3_CREDENTIALS });
      try {
        await assert.rejects(store.put(streamOf(patterned(10), 10), { maxBytes: 10 }), (error: unknown) => {
          assert.ok(error instanceof S3RequestError);
          assert.equal(error.code, 'NoSuchBucket');
          assert.match(error.message, /the bucket of --blob-store does not exist/);
          return true;
        });
      } finally {
        await store.close();
      }
    });
  });
});

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** A port of 127.0.0.1 that was free a moment ago and that nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
