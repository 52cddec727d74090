import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Resource } from '../packages/core/src/index';
import { startTestRunloom, type TestRunloom } from './support/harness';
import { S3_CREDENTIALS, S3Server } from './support/s3-server';

/**
 * `blobStore: 's3://bucket/prefix'` with `s3Endpoint`: resource bytes go to the bucket, signed with
 * the usual AWS environment credentials, and nothing to the data dir.
 */
describe('resources on an S3-compatible blob store', function () {
  this.timeout(30_000);
  const BUCKET = 'runloom-e2e';
  let server: S3Server;
  let app: TestRunloom;
  const savedEnv = { AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY };

  before(async () => {
    server = await S3Server.start([BUCKET]);
    process.env.AWS_ACCESS_KEY_ID = S3_CREDENTIALS.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = S3_CREDENTIALS.secretAccessKey;
    app = await startTestRunloom({ blobStore: `s3://${BUCKET}/instances/blobs`, s3Endpoint: server.endpoint });
  });
  after(async () => {
    await app?.close();
    await server?.stop();
    for (const [name, value] of Object.entries(savedEnv)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('keeps an upload as an object under the prefix, serves it and its ranges, and deletes it with the last resource', async () => {
    const bytes = new TextEncoder().encode('bytes shared by every instance');
    const response = await app.request('/v1/resources?name=shared.txt', { method: 'POST', body: bytes, headers: { 'content-type': 'text/plain' } });
    assert.equal(response.status, 201, await response.clone().text());
    const resource = (await response.json()) as Resource;

    const objects = server.objectFiles(BUCKET, 'instances/blobs/');
    assert.equal(objects.length, 1);
    assert.match(objects[0]!, /^instances\/blobs\/[0-9a-f]{2}\/[0-9a-f]{2}\/[0-9a-f]{64}-[0-9a-f]{16}$/);
    assert.equal(fs.existsSync(path.join(app.dataDir, 'blobs')), false);

    const content = await app.request(`/v1/resource/${resource.id}/content`);
    assert.equal(await content.text(), 'bytes shared by every instance');
    const range = await app.request(`/v1/resource/${resource.id}/content`, { headers: { range: 'bytes=6-11' } });
    assert.equal(range.status, 206);
    assert.equal(await range.text(), 'shared');

    assert.equal((await app.request(`/v1/resource/${resource.id}`, { method: 'DELETE' })).status, 200);
    assert.deepEqual(server.objectFiles(BUCKET, 'instances/blobs/'), []);
  });

  it('answers 503 naming no credential when the store refuses an upload, and keeps no resource', async () => {
    const broken = await startTestRunloom({ blobStore: 's3://no-such-bucket/blobs', s3Endpoint: server.endpoint });
    try {
      const response = await broken.request('/v1/resources?name=lost.txt', { method: 'POST', body: 'lost', headers: { 'content-type': 'text/plain' } });
      assert.equal(response.status, 503);
      const body = (await response.json()) as { error: string; code: string };
      assert.deepEqual(body, { error: 'the resource store is unavailable; retry later', code: 'UNAVAILABLE' });
      assert.deepEqual(await (await broken.request('/v1/resources')).json(), []);
    } finally {
      await broken.close();
    }
  });
});
