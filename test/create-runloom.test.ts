import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ContainerModule, createRunloom, Lifecycle, Migrations, RunloomOptionsError, type CreateRunloomOptions } from '../packages/core/src/index';

describe('createRunloom', function () {
  this.timeout(20_000);
  let dataDir: string;

  beforeEach(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-start-'));
  });
  afterEach(() => {
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  describe('options', () => {
    const refused: Array<[string, Record<string, unknown>, RegExp]> = [
      ['a zero token lifetime', { tokenTtlSeconds: 0 }, /^createRunloom: options\.tokenTtlSeconds must be a positive integer$/],
      ['a fractional concurrency', { runConcurrency: 1.5 }, /^createRunloom: options\.runConcurrency must be a positive integer$/],
      ['a number given as text', { uploadLimitBytes: '4096' }, /^createRunloom: options\.uploadLimitBytes must be a number$/],
      ['a negative rate limit', { rateLimit: -1 }, /^createRunloom: options\.rateLimit must be a number ≥ 0/],
      ['a negative backoff', { callbackInitialBackoffMs: -5 }, /options\.callbackInitialBackoffMs must be an integer ≥ 0/],
      ['a flag that is not a boolean', { allowPrivateNetwork: 'yes' }, /options\.allowPrivateNetwork must be a boolean/],
      ['an empty data dir', { dataDir: '  ' }, /options\.dataDir must be a folder path/],
      ['a base path without its leading slash', { basePath: 'api' }, /options\.basePath must be '' or look like \/prefix/],
      ['a database URL of another kind', { databaseUrl: 'mysql://localhost/runloom' }, /options\.databaseUrl must be a postgres:\/\/ or postgresql:\/\/ URL/],
      ['a secret key of the wrong size', { secretKey: Buffer.alloc(16).toString('base64') }, /options\.secretKey must be 32 bytes in base64/],
      ['a metrics token with a space', { metricsToken: 'two words' }, /options\.metricsToken must be 1–1024 visible ASCII/],
      ['a malformed bootstrap client', { bootstrapClients: ['acct:no-secret'] }, /options\.bootstrapClients bootstrap client #1 is invalid/],
      ['bootstrap clients that are not a list', { bootstrapClients: 'a:b:c' }, /options\.bootstrapClients must be an array/],
      ['a module that is not a ContainerModule', { modules: [{ load() {} }] }, /options\.modules\[0\] must be a ContainerModule imported from '@runloom\/core'/],
      ['a misspelt option', { tokenTTLSeconds: 60 }, /^createRunloom: unknown option 'tokenTTLSeconds'$/],
      ['a blob store URL of another kind', { blobStore: 'gs://bucket/blobs' }, /^createRunloom: options\.blobStore must be a folder path or an s3:\/\/bucket\/prefix URL/],
      ['an S3 bucket name S3 refuses', { blobStore: 's3://UPPER/blobs' }, /^createRunloom: options\.blobStore must name a bucket of 3–63/],
      ['an S3 endpoint without an s3:// blob store', { s3Endpoint: 'http://127.0.0.1:9000' }, /^createRunloom: options\.s3Endpoint needs options\.blobStore to be an s3:\/\/bucket\/prefix URL$/],
      ['an S3 endpoint holding credentials', { blobStore: 's3://bucket', s3Endpoint: 'http://key:secret@127.0.0.1:9000' }, /options\.s3Endpoint must not hold credentials/],
    ];
    for (const [what, options, message] of refused) {
      it(`refuses ${what} with an error naming the option, before opening anything`, async () => {
        await assert.rejects(createRunloom({ dataDir, ...options } as CreateRunloomOptions), (error: unknown) => {
          assert.ok(error instanceof RunloomOptionsError, String(error));
          assert.match(error.message, message);
          return true;
        });
        assert.deepEqual(fs.readdirSync(dataDir), [], 'the data dir was touched');
      });
    }

    it('never repeats a secret in its error', async () => {
      const secrets = { secretKey: 'not-base64-but-secret!', bootstrapClients: ['acct-a::super-secret-value'], metricsToken: 'secret with space' };
      for (const [option, value] of Object.entries(secrets)) {
        await assert.rejects(createRunloom({ dataDir, [option]: value }), (error: Error) => {
          assert.match(error.message, new RegExp(`options\\.${option} `));
          assert.ok(!error.message.includes(String(value).replace(/^acct-a::/, '')), error.message);
          return true;
        });
      }
    });

    it('takes undefined as "the default"', async () => {
      const runloom = await createRunloom({ dataDir, tokenTtlSeconds: undefined, basePath: undefined, modules: undefined });
      try {
        assert.equal(runloom.config.tokenTtlSeconds, 3600);
        assert.equal(runloom.config.basePath, '');
      } finally {
        await runloom.close();
      }
    });
  });

  describe('a start that fails', () => {
    /** A host lifecycle that records its calls, and one after it whose start throws. */
    function failingStart(): { module: ContainerModule; calls: string[] } {
      const calls: string[] = [];
      const module = new ContainerModule(({ bind }) => {
        bind(Lifecycle).toConstantValue({
          name: 'recorder',
          start: async () => void calls.push('recorder started'),
          stop: async () => void calls.push('recorder stopped'),
        });
        bind(Lifecycle).toConstantValue({
          name: 'failing',
          start: async () => {
            throw new Error('the host lifecycle failed to start');
          },
          stop: async () => void calls.push('failing stopped'),
        });
      });
      return { module, calls };
    }

    async function opensAgain(): Promise<void> {
      const runloom = await createRunloom({ dataDir });
      try {
        assert.equal((await runloom.handle(new Request('http://runloom.test/readyz'))).status, 200);
      } finally {
        await runloom.close();
      }
    }

    it('stops what a failing Lifecycle start left started, releases the lock, and the data dir opens again in this process', async () => {
      const { module, calls } = failingStart();
      await assert.rejects(createRunloom({ dataDir, modules: [module] }), /the host lifecycle failed to start/);
      assert.deepEqual(calls, ['recorder started', 'failing stopped', 'recorder stopped']);
      assert.ok(!fs.existsSync(path.join(dataDir, 'db', 'LOCK')), 'the data dir lock was left behind');
      await opensAgain();
    });

    it('closes the store when a migration throws, and the data dir opens again in this process', async () => {
      const broken = new ContainerModule(({ bind }) => {
        bind(Migrations).toConstantValue([{ id: 'test/001-broken', steps: [{ addField: { collection: 'no_such_collection', field: 'x', type: 'text' } }] }]);
      });
      await assert.rejects(createRunloom({ dataDir, modules: [broken] }), /collection no_such_collection does not exist/);
      assert.ok(!fs.existsSync(path.join(dataDir, 'db', 'LOCK')), 'the data dir lock was left behind');
      await opensAgain();
    });

    it('closes the store when a built-in start step throws (a bootstrap client the accounts refuse)', async () => {
      await assert.rejects(createRunloom({ dataDir, bootstrapClients: ['acct x:client:very-secret-value'] }), /account id must be/);
      await opensAgain();
    });
  });
});
