import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Database, type Resource } from '../packages/core/src/index';
import { ManualClock } from '../packages/core/src/testing/manual-clock';
import { startTestRunloom, type TestRunloom } from './support/harness';
import { startTestServer, type TestServer } from './support/server';
import { waitUntil } from './support/wait';

const RECORD_FIELDS = [
  'id',
  'account_id',
  'name',
  'directory_path',
  'mime_type',
  'sha256',
  'original_uri',
  'external_id',
  'external_storage_type',
  'storage_bucket',
  'storage_key',
  'size_bytes',
  'tags',
  'metadata',
  'created_by',
  'created_at',
  'updated_at',
].sort();
const UPLOAD_LIMIT = 2 * 1024 * 1024;
/** The operators' credential for /metrics. */
const METRICS_TOKEN = 'metrics-token-for-tests';

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

type Bytes = Uint8Array<ArrayBuffer>;

function bytesOf(size: number, seed = 1): Bytes {
  const bytes = new Uint8Array(size);
  for (let index = 0; index < size; index += 1) bytes[index] = (index * 7 + seed * 13 + (index >> 10)) & 0xff;
  return bytes;
}

type FormEntry = [name: string, value: string] | [name: string, bytes: Bytes, filename: string, type?: string];

function form(entries: FormEntry[]): FormData {
  const data = new FormData();
  for (const [name, value, filename, type] of entries) {
    if (typeof value === 'string') data.append(name, value);
    else data.append(name, new Blob([value], { type: type ?? 'application/octet-stream' }), filename);
  }
  return data;
}

async function uploadForm(app: TestRunloom, entries: FormEntry[], options: { account?: string; query?: string } = {}): Promise<Response> {
  return app.request(`/v1/resources${options.query ?? ''}`, { method: 'POST', body: form(entries), account: options.account });
}

async function uploadRaw(app: TestRunloom, bytes: Bytes, query: string, options: { account?: string; type?: string } = {}): Promise<Response> {
  return app.request(`/v1/resources${query}`, {
    method: 'POST',
    body: bytes,
    headers: { 'content-type': options.type ?? 'application/octet-stream' },
    account: options.account,
  });
}

async function created(response: Response): Promise<Resource> {
  const body = (await response.json()) as Resource;
  assert.equal(response.status, 201, JSON.stringify(body));
  return body;
}

async function bodyBytes(response: Response): Promise<Uint8Array> {
  return new Uint8Array(await response.arrayBuffer());
}

/** Blob files at rest (not temporary ones), relative to the blob root. */
function blobFiles(app: { dataDir: string }): string[] {
  const root = path.join(app.dataDir, 'blobs');
  if (!fs.existsSync(root)) return [];
  return fs
    .readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)))
    .filter((file) => !file.startsWith(`tmp${path.sep}`));
}

function tempFiles(app: { dataDir: string }): string[] {
  const tempDir = path.join(app.dataDir, 'blobs', 'tmp');
  return fs.existsSync(tempDir) ? fs.readdirSync(tempDir) : [];
}

async function errorOf(response: Response, status: number): Promise<{ error: string; details?: { path: string; message: string }[] }> {
  const body = (await response.json()) as { error: string; details?: { path: string; message: string }[] };
  assert.equal(response.status, status, JSON.stringify(body));
  assert.equal(typeof body.error, 'string');
  return body;
}

describe('Resources (HTTP)', () => {
  let app: TestRunloom;
  // Stamps come from this clock, so a test can assert them exactly rather than against the system time.
  let clock: ManualClock;

  beforeEach(async () => {
    clock = new ManualClock();
    app = await startTestRunloom({ uploadLimitBytes: UPLOAD_LIMIT, metricsToken: METRICS_TOKEN, clock });
  });
  afterEach(async () => {
    await app.close();
  });

  describe('upload', () => {
    it('stores a multipart upload with fields before the file, and answers exactly the documented record', async () => {
      const bytes = bytesOf(300_000);
      const resource = await created(
        await uploadForm(app, [
          ['name', 'report.pdf'],
          ['directory_path', '/contracts/2024'],
          ['tags', 'legal'],
          ['tags', 'q3'],
          ['metadata', '{"client":"acme","pages":12}'],
          ['original_uri', 'https://example.com/report.pdf?x=1'],
          ['external_id', 'ext-42'],
          ['external_storage_type', 's3'],
          ['file', bytes, 'upload.bin', 'application/pdf'],
        ]),
      );
      assert.deepEqual(Object.keys(resource).sort(), RECORD_FIELDS);
      assert.match(resource.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      assert.equal(resource.account_id, 'acct-a');
      assert.equal(resource.name, 'report.pdf');
      assert.equal(resource.directory_path, '/contracts/2024');
      assert.equal(resource.mime_type, 'application/pdf');
      assert.equal(resource.sha256, sha256(bytes));
      assert.equal(resource.size_bytes, bytes.byteLength);
      assert.deepEqual(resource.tags, ['legal', 'q3']);
      assert.deepEqual(resource.metadata, { client: 'acme', pages: 12 });
      assert.equal(resource.original_uri, 'https://example.com/report.pdf?x=1');
      assert.equal(resource.external_id, 'ext-42');
      assert.equal(resource.external_storage_type, 's3');
      assert.equal(resource.created_by, null);
      assert.equal(resource.storage_bucket, 'local');
      assert.ok(resource.storage_key.includes(resource.sha256));
      assert.equal(resource.created_at, clock.now().toISOString());
      assert.equal(resource.updated_at, resource.created_at);
      assert.deepEqual(blobFiles(app), [path.normalize(resource.storage_key)]);

      const fetched = await app.request(`/v1/resource/${resource.id}`);
      assert.equal(fetched.status, 200);
      assert.deepEqual(await fetched.json(), resource);
      const content = await app.request(`/v1/resource/${resource.id}/content`);
      assert.equal(content.status, 200);
      assert.deepEqual(await bodyBytes(content), bytes);
    });

    it('stores a multipart upload whose fields come after the file, naming it after the file by default', async () => {
      const bytes = new TextEncoder().encode('hello, fields later');
      const resource = await created(
        await uploadForm(app, [
          ['file', bytes, 'notes.txt', 'text/plain'],
          ['tags', '["a","b"]'],
          ['metadata', 'null'],
          ['directory_path', '/later'],
        ]),
      );
      assert.equal(resource.name, 'notes.txt');
      assert.equal(resource.mime_type, 'text/plain');
      assert.equal(resource.directory_path, '/later');
      assert.deepEqual(resource.tags, ['a', 'b']);
      assert.equal(resource.metadata, null);
      assert.equal(resource.sha256, sha256(bytes));
    });

    it('defaults directory_path to / and tags to [], and takes the query as defaults that form fields override', async () => {
      const resource = await created(await uploadForm(app, [['name', 'from-form'], ['file', bytesOf(10), 'x']], { query: '?name=from-query&tags=q' }));
      assert.equal(resource.name, 'from-form');
      assert.equal(resource.directory_path, '/');
      assert.deepEqual(resource.tags, ['q']);
    });

    it('stores raw bytes with ?name=&directory_path= and the Content-Type as mime_type', async () => {
      const bytes = bytesOf(70_000, 3);
      const resource = await created(await uploadRaw(app, bytes, '?name=photo.png&directory_path=%2Fimages', { type: 'image/png' }));
      assert.equal(resource.name, 'photo.png');
      assert.equal(resource.directory_path, '/images');
      assert.equal(resource.mime_type, 'image/png');
      assert.equal(resource.size_bytes, 70_000);
      assert.equal(resource.sha256, sha256(bytes));
      assert.deepEqual(await bodyBytes(await app.request(`/v1/resource/${resource.id}/content`)), bytes);
    });

    it('stores empty content', async () => {
      const resource = await created(await uploadRaw(app, new Uint8Array(0), '?name=empty.txt', { type: 'text/plain' }));
      assert.equal(resource.size_bytes, 0);
      assert.equal(resource.sha256, sha256(new Uint8Array(0)));
      const content = await app.request(`/v1/resource/${resource.id}/content`);
      assert.equal(content.headers.get('content-length'), '0');
      assert.equal((await bodyBytes(content)).byteLength, 0);
    });
  });

  describe('shared content', () => {
    it('stores identical uploads once, keeps the bytes while one resource remains, and frees them with the last', async () => {
      const bytes = bytesOf(123_456, 9);
      const first = await created(await uploadRaw(app, bytes, '?name=one'));
      const second = await created(await uploadForm(app, [['file', bytes, 'two']], { account: 'acct-b' }));
      assert.equal(second.storage_key, first.storage_key);
      assert.equal(blobFiles(app).length, 1);

      assert.equal((await app.request(`/v1/resource/${first.id}`, { method: 'DELETE' })).status, 200);
      assert.equal(blobFiles(app).length, 1);
      const kept = await app.request(`/v1/resource/${second.id}/content`, { account: 'acct-b' });
      assert.deepEqual(await bodyBytes(kept), bytes);

      assert.equal((await app.request(`/v1/resource/${second.id}`, { method: 'DELETE', account: 'acct-b' })).status, 200);
      assert.deepEqual(blobFiles(app), []);
    });

    it('frees the bytes exactly once when the last two references are deleted at the same time', async () => {
      const bytes = bytesOf(50_000, 4);
      for (let round = 0; round < 10; round += 1) {
        const [a, b] = await Promise.all([
          app.runloom.resources.upload('acct-a', { name: 'a' }, new Blob([bytes]).stream()),
          app.runloom.resources.upload('acct-a', { name: 'b' }, new Blob([bytes]).stream()),
        ]);
        assert.equal(a!.storage_key, b!.storage_key);
        await Promise.all([app.runloom.resources.delete('acct-a', a!.id), app.runloom.resources.delete('acct-a', b!.id)]);
        assert.deepEqual(blobFiles(app), []);
        const database = app.runloom.container.get<Database>(Database);
        assert.equal(await database.count('resource_blobs'), 0);
      }
    });

    it('never loses the bytes of an upload that races the deletion of the last resource sharing them', async () => {
      const bytes = bytesOf(40_000, 5);
      for (let round = 0; round < 15; round += 1) {
        const old = await app.runloom.resources.upload('acct-a', { name: 'old' }, new Blob([bytes]).stream());
        const [, fresh] = await Promise.all([
          app.runloom.resources.delete('acct-a', old.id),
          app.runloom.resources.upload('acct-a', { name: 'fresh' }, new Blob([bytes]).stream()),
        ]);
        const content = await app.request(`/v1/resource/${fresh.id}/content`);
        assert.equal(content.status, 200);
        assert.equal(sha256(await bodyBytes(content)), sha256(bytes));
        assert.equal(blobFiles(app).length, 1);
        await app.runloom.resources.delete('acct-a', fresh.id);
        assert.deepEqual(blobFiles(app), []);
      }
    });
  });

  describe('download', () => {
    let resource: Resource;
    const bytes = bytesOf(1_000, 2);

    beforeEach(async () => {
      resource = await created(await uploadRaw(app, bytes, '?name=data%20%C3%BC.bin', { type: 'application/x-test' }));
    });

    it('answers the bytes with Content-Type, Content-Length, the sha256 as ETag and Accept-Ranges', async () => {
      const response = await app.request(`/v1/resource/${resource.id}/content`);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'application/x-test');
      assert.equal(response.headers.get('content-length'), '1000');
      assert.equal(response.headers.get('etag'), `"${resource.sha256}"`);
      assert.equal(response.headers.get('accept-ranges'), 'bytes');
      assert.match(response.headers.get('content-disposition') ?? '', /filename\*=UTF-8''data%20%C3%BC\.bin/);
      assert.deepEqual(await bodyBytes(response), bytes);
    });

    it('serves active and unknown types as an attachment under CSP sandbox, passive ones inline, never sniffed', async () => {
      const active = [
        'text/html',
        'TEXT/HTML; charset=utf-8',
        'image/svg+xml',
        'application/xhtml+xml',
        'application/xml',
        'text/xml',
        'application/javascript',
        'text/javascript',
        'application/ecmascript',
        'text/css',
        'application/octet-stream',
        'application/x-shockwave-flash',
        'application/vnd.unknown+json',
        'video/x-unknown+xml',
        'multipart/x-mixed-replace',
        'text/vtt',
      ];
      const passive = ['text/plain', 'text/plain; charset=utf-8', 'text/csv', 'image/png', 'image/jpeg', 'application/pdf', 'application/json', 'video/mp4', 'audio/mpeg'];
      const page = new TextEncoder().encode('<html><script>alert(document.cookie)</script></html>');
      const wrong: string[] = [];
      for (const [type, expected] of [...active.map((type) => [type, 'attachment'] as const), ...passive.map((type) => [type, 'inline'] as const)]) {
        const resource = await created(await uploadRaw(app, page, `?name=${encodeURIComponent('page "x".html')}`, { type }));
        for (const headers of [{}, { range: 'bytes=0-3' }, { 'if-none-match': `"${resource.sha256}"` }] as Record<string, string>[]) {
          for (const method of ['GET', 'HEAD']) {
            const response = await app.request(`/v1/resource/${resource.id}/content`, { method, headers });
            await response.body?.cancel();
            const disposition = response.headers.get('content-disposition') ?? '';
            const csp = response.headers.get('content-security-policy');
            const ok =
              response.headers.get('x-content-type-options') === 'nosniff' &&
              disposition.startsWith(`${expected}; filename="page _x_.html"`) &&
              (expected === 'attachment' ? csp === 'sandbox' : csp === null);
            if (!ok) wrong.push(`${type} ${method} ${JSON.stringify(headers)} → ${response.status} ${disposition} csp=${csp}`);
          }
        }
      }
      assert.deepEqual(wrong, []);
    });

    it('answers HEAD like GET without the body: status, Content-Length, ETag, Content-Range', async () => {
      for (const headers of [{}, { range: 'bytes=10-19' }, { 'if-none-match': `"${resource.sha256}"` }, { range: 'bytes=5000-' }] as Record<string, string>[]) {
        const get = await app.request(`/v1/resource/${resource.id}/content`, { headers });
        await get.arrayBuffer();
        const head = await app.request(`/v1/resource/${resource.id}/content`, { method: 'HEAD', headers });
        assert.equal(head.status, get.status, JSON.stringify(headers));
        for (const name of ['content-length', 'content-type', 'etag', 'content-range', 'accept-ranges', 'content-disposition']) {
          if (get.headers.has(name)) assert.equal(head.headers.get(name), get.headers.get(name), `${name} ${JSON.stringify(headers)}`);
        }
        assert.equal(head.body, null);
      }
    });

    it('counts a download in /metrics as an open stream until its body is read or cancelled', async () => {
      const openStreams = async (): Promise<number> => {
        const metrics = await (await app.request('/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
        const sample = /^runloom_open_streams (\d+)$/m.exec(metrics);
        assert.ok(sample, metrics);
        return Number(sample[1]);
      };
      const before = await openStreams();
      const read = await app.request(`/v1/resource/${resource.id}/content`);
      const cancelled = await app.request(`/v1/resource/${resource.id}/content`);
      assert.equal(await openStreams(), before + 2);
      await cancelled.body!.cancel();
      assert.equal(await openStreams(), before + 1);
      assert.deepEqual(await bodyBytes(read), bytes);
      assert.equal(await openStreams(), before);
    });

    it('answers 304 when If-None-Match names the ETag (strong, weak, in a list or *), and 200 otherwise', async () => {
      for (const header of [`"${resource.sha256}"`, `W/"${resource.sha256}"`, `"other", "${resource.sha256}"`, '*']) {
        const response = await app.request(`/v1/resource/${resource.id}/content`, { headers: { 'if-none-match': header } });
        assert.equal(response.status, 304, header);
        assert.equal(response.headers.get('etag'), `"${resource.sha256}"`);
        assert.equal((await bodyBytes(response)).byteLength, 0);
      }
      const changed = await app.request(`/v1/resource/${resource.id}/content`, { headers: { 'if-none-match': '"something-else"' } });
      assert.equal(changed.status, 200);
      assert.deepEqual(await bodyBytes(changed), bytes);
    });

    it('answers 206 with Content-Range for bytes=a-b, a- and -n', async () => {
      const cases: [string, number, number][] = [
        ['bytes=0-9', 0, 9],
        ['bytes=990-', 990, 999],
        ['bytes=-5', 995, 999],
        ['bytes=500-5000', 500, 999],
        ['bytes=-5000', 0, 999],
      ];
      for (const [range, start, end] of cases) {
        const response = await app.request(`/v1/resource/${resource.id}/content`, { headers: { range } });
        assert.equal(response.status, 206, range);
        assert.equal(response.headers.get('content-range'), `bytes ${start}-${end}/1000`);
        assert.equal(response.headers.get('content-length'), String(end - start + 1));
        assert.equal(response.headers.get('etag'), `"${resource.sha256}"`);
        assert.deepEqual(await bodyBytes(response), bytes.subarray(start, end + 1));
      }
    });

    it('answers 416 with Content-Range bytes */size for a range past the end', async () => {
      for (const range of ['bytes=1000-', 'bytes=5000-6000', 'bytes=-0']) {
        const response = await app.request(`/v1/resource/${resource.id}/content`, { headers: { range } });
        assert.equal(response.status, 416, range);
        assert.equal(response.headers.get('content-range'), 'bytes */1000');
        await errorOf(response, 416);
      }
    });

    it('sends the whole content for malformed or multiple ranges, and when If-Range names other content', async () => {
      const requests: Record<string, string>[] = [
        { range: 'bytes=9-2' },
        { range: 'items=0-1' },
        { range: 'bytes=0-1,5-6' },
        { range: 'bytes=0-1', 'if-range': '"older"' },
      ];
      for (const headers of requests) {
        const response = await app.request(`/v1/resource/${resource.id}/content`, { headers });
        assert.equal(response.status, 200, JSON.stringify(headers));
        assert.deepEqual(await bodyBytes(response), bytes);
      }
      const matching = await app.request(`/v1/resource/${resource.id}/content`, { headers: { range: 'bytes=0-1', 'if-range': `"${resource.sha256}"` } });
      assert.equal(matching.status, 206);
      await matching.arrayBuffer();
    });
  });

  describe('upload limit', () => {
    it('answers 413 for raw, streamed and multipart uploads past the limit, and keeps no blob or temporary file', async () => {
      const tooBig = bytesOf(UPLOAD_LIMIT + 1);
      await errorOf(await uploadRaw(app, tooBig, '?name=big'), 413);

      const streamed = await app.request('/v1/resources?name=big', {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream' },
        body: new Blob([tooBig]).stream(),
        duplex: 'half',
      } as RequestInit);
      const streamedError = await errorOf(streamed, 413);
      assert.match(streamedError.error, new RegExp(String(UPLOAD_LIMIT)));

      await errorOf(await uploadForm(app, [['name', 'big'], ['file', tooBig, 'big']]), 413);
      assert.deepEqual(blobFiles(app), []);
      assert.deepEqual(tempFiles(app), []);

      const exact = await created(await uploadRaw(app, bytesOf(UPLOAD_LIMIT), '?name=exact'));
      assert.equal(exact.size_bytes, UPLOAD_LIMIT);
    });
  });

  describe('list', () => {
    it('filters by directory_path and tags (all must match) and pages with limit and offset, oldest first', async () => {
      const made: Resource[] = [];
      const specs: [string, string, string[]][] = [
        ['a', '/docs', ['x', 'y']],
        ['b', '/docs', ['x']],
        ['c', '/img', ['x', 'y', 'z']],
        ['d', '/docs', ['y']],
        ['e', '/docs', []],
      ];
      for (const [name, directory, tags] of specs) {
        made.push(await created(await uploadForm(app, [['name', name], ['directory_path', directory], ['tags', JSON.stringify(tags)], ['file', bytesOf(10, name.charCodeAt(0)), name]])));
      }
      const names = async (query: string): Promise<string[]> => {
        const response = await app.request(`/v1/resources${query}`);
        assert.equal(response.status, 200);
        return ((await response.json()) as Resource[]).map((resource) => resource.name);
      };
      assert.deepEqual(await names(''), ['a', 'b', 'c', 'd', 'e']);
      assert.deepEqual(await names('?directory_path=%2Fdocs'), ['a', 'b', 'd', 'e']);
      assert.deepEqual(await names('?tags=x'), ['a', 'b', 'c']);
      assert.deepEqual(await names('?tags=x,y'), ['a', 'c']);
      assert.deepEqual(await names('?tags=x&tags=y&directory_path=%2Fdocs'), ['a']);
      assert.deepEqual(await names('?limit=2'), ['a', 'b']);
      assert.deepEqual(await names('?limit=2&offset=2'), ['c', 'd']);
      assert.deepEqual(await names('?offset=4'), ['e']);
      assert.deepEqual(await names('?offset=10'), []);
      const full = (await (await app.request('/v1/resources?limit=1')).json()) as Resource[];
      assert.deepEqual(full, [made[0]]);
    });

    it('refuses a limit or offset out of range or not a number with 400', async () => {
      for (const query of ['?limit=0', '?limit=501', '?limit=abc', '?offset=-1', '?limit=2.5']) {
        const body = await errorOf(await app.request(`/v1/resources${query}`), 400);
        assert.ok(body.details?.length, query);
      }
      assert.equal((await app.request('/v1/resources?limit=500')).status, 200);
    });
  });

  describe('update', () => {
    it('changes the given fields only, moves updated_at and never the content', async () => {
      const resource = await created(await uploadForm(app, [['name', 'n'], ['tags', 't1'], ['metadata', '{"a":1}'], ['file', bytesOf(20), 'n']]));
      const response = await app.request(`/v1/resource/${resource.id}`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          name: 'renamed.txt',
          directory_path: '/moved',
          tags: ['t2', 't3'],
          metadata: { b: 2 },
          original_uri: 'gs://bucket/obj',
          external_id: 'e-1',
          external_storage_type: 'gcs',
          sha256: 'f'.repeat(64),
          size_bytes: 1,
          unknown_field: true,
        }),
      });
      assert.equal(response.status, 200);
      const updated = (await response.json()) as Resource;
      assert.deepEqual(updated, {
        ...resource,
        name: 'renamed.txt',
        directory_path: '/moved',
        tags: ['t2', 't3'],
        metadata: { b: 2 },
        original_uri: 'gs://bucket/obj',
        external_id: 'e-1',
        external_storage_type: 'gcs',
        updated_at: updated.updated_at,
      });
      assert.ok(updated.updated_at > resource.updated_at);
      assert.deepEqual(await (await app.request(`/v1/resource/${resource.id}`)).json(), updated);

      const cleared = await app.request(`/v1/resource/${resource.id}`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ tags: null, metadata: null, external_storage_type: null }),
      });
      const clearedBody = (await cleared.json()) as Resource;
      assert.deepEqual([clearedBody.tags, clearedBody.metadata, clearedBody.external_storage_type, clearedBody.name], [[], null, null, 'renamed.txt']);
    });

    it('refuses wrong types, bad values and huge fields with 400 and details, changing nothing', async () => {
      const resource = await created(await uploadRaw(app, bytesOf(5), '?name=keep'));
      const bodies: unknown[] = [
        { name: 5 },
        { name: '' },
        { name: 'x'.repeat(2000) },
        { tags: 'not-an-array' },
        { tags: [1, 2] },
        { tags: ['with,comma'] },
        { metadata: [1, 2] },
        { metadata: 'text' },
        { external_storage_type: 'dropbox' },
        { directory_path: 'a\u0000b' },
        { metadata: { big: 'x'.repeat(300_000) } },
      ];
      for (const body of bodies) {
        const response = await app.request(`/v1/resource/${resource.id}`, {
          method: 'PATCH',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        assert.ok(response.status === 400 || response.status === 413, `${JSON.stringify(body).slice(0, 60)} → ${response.status}`);
        assert.equal(typeof ((await response.json()) as { error: unknown }).error, 'string');
      }
      const malformed = await app.request(`/v1/resource/${resource.id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{"name":' });
      await errorOf(malformed, 400);
      const wrongType = await app.request(`/v1/resource/${resource.id}`, { method: 'PATCH', headers: { 'content-type': 'text/plain' }, body: 'name=x' });
      await errorOf(wrongType, 415);
      assert.deepEqual(await (await app.request(`/v1/resource/${resource.id}`)).json(), resource);
    });
  });

  describe('delete', () => {
    it('answers 200 {id}, then 404 for the record, its content and a second delete', async () => {
      const resource = await created(await uploadRaw(app, bytesOf(5), '?name=gone'));
      const response = await app.request(`/v1/resource/${resource.id}`, { method: 'DELETE' });
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), { id: resource.id });
      await errorOf(await app.request(`/v1/resource/${resource.id}`), 404);
      await errorOf(await app.request(`/v1/resource/${resource.id}/content`), 404);
      await errorOf(await app.request(`/v1/resource/${resource.id}`, { method: 'DELETE' }), 404);
    });

    it('answers 409 while a queued or running run embeds the resource, and deletes once the run has finished', async () => {
      const resource = await created(await uploadRaw(app, bytesOf(5), '?name=in-use'));
      const database = app.runloom.container.get<Database>(Database);
      const run = {
        id: '0190b0b0-0000-7000-8000-000000000001',
        account_id: 'acct-a',
        runnable_id: '0190b0b0-0000-7000-8000-000000000002',
        status: 'queued',
        created_at: new Date().toISOString(),
        resources: [{ name: 'doc', resource: { id: resource.id } }],
        resource_ids: [resource.id],
      };
      await database.write([{ op: 'insert', collection: 'runs', doc: run }]);
      for (const status of ['queued', 'running']) {
        await database.write([{ op: 'replace', collection: 'runs', doc: { ...run, status } }]);
        const refused = await errorOf(await app.request(`/v1/resource/${resource.id}`, { method: 'DELETE' }), 409);
        assert.match(refused.error, /queued or running run/);
        assert.equal((await app.request(`/v1/resource/${resource.id}`)).status, 200);
      }
      await database.write([{ op: 'replace', collection: 'runs', doc: { ...run, status: 'succeeded' } }]);
      assert.equal((await app.request(`/v1/resource/${resource.id}`, { method: 'DELETE' })).status, 200);
    });
  });

  describe('account isolation', () => {
    it('answers another account’s resource as missing on every route, and lists only the caller’s own', async () => {
      const resource = await created(await uploadRaw(app, bytesOf(64), '?name=private&directory_path=%2Fp'));
      const other = { account: 'acct-b' };
      await errorOf(await app.request(`/v1/resource/${resource.id}`, other), 404);
      await errorOf(await app.request(`/v1/resource/${resource.id}/content`, other), 404);
      await errorOf(await app.request(`/v1/resource/${resource.id}/content`, { ...other, headers: { 'if-none-match': '*' } }), 404);
      await errorOf(
        await app.request(`/v1/resource/${resource.id}`, { ...other, method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{"name":"stolen"}' }),
        404,
      );
      await errorOf(await app.request(`/v1/resource/${resource.id}`, { ...other, method: 'DELETE' }), 404);
      assert.deepEqual(await (await app.request('/v1/resources?directory_path=%2Fp', other)).json(), []);
      assert.deepEqual(await (await app.request(`/v1/resource/${resource.id}`)).json(), resource);
      assert.equal(blobFiles(app).length, 1);
    });
  });

  describe('bad input', () => {
    it('answers 404 for path ids that are not UUIDs, on every route', async () => {
      for (const [method, suffix] of [['GET', ''], ['GET', '/content'], ['PATCH', ''], ['DELETE', '']] as const) {
        const response = await app.request(`/v1/resource/not-a-uuid${suffix}`, {
          method,
          ...(method === 'PATCH' ? { headers: { 'content-type': 'application/json' }, body: '{}' } : {}),
        });
        await errorOf(response, 404);
      }
    });

    it('refuses bad upload fields with 400 and keeps no content', async () => {
      const file: FormEntry = ['file', bytesOf(100), 'f.bin'];
      const forms: [FormEntry[], RegExp][] = [
        [[['metadata', '{not json'], file], /metadata must be valid JSON/],
        [[file, ['metadata', '[1,2]']], /metadata/],
        [[file, ['metadata', '"text"']], /metadata/],
        [[['tags', '[unclosed'], file], /tags must be valid JSON/],
        [[file, ['tags', '[1]']], /tags/],
        [[['external_storage_type', 'dropbox'], file], /external_storage_type/],
        [[file, ['external_storage_type', 'dropbox']], /external_storage_type/],
        [[['name', 'x'.repeat(1025)], file], /name/],
        [[['name', 'a'], ['metadata', `{"a":"${'x'.repeat(1024 * 1024)}"}`], file], /metadata/],
        [[['name', 'no file']], /no file part/],
        [[['document', bytesOf(10), 'd.bin']], /part named file/],
        [[file, ['file', bytesOf(10), 'again.bin']], /exactly one file part/],
      ];
      for (const [entries, message] of forms) {
        const body = await errorOf(await uploadForm(app, entries), 400);
        assert.match(body.error, message);
      }
      const raw: [string, RegExp][] = [
        ['', /name is required/],
        ['?name=a&metadata=%7Bbad', /metadata must be valid JSON/],
        ['?name=a&external_storage_type=ftp', /external_storage_type/],
      ];
      for (const [query, message] of raw) {
        const body = await errorOf(await uploadRaw(app, bytesOf(10), query), 400);
        assert.match(body.error, message);
      }
      const badMime = await errorOf(await uploadRaw(app, bytesOf(10), '?name=a', { type: 'nonsense' }), 400);
      assert.match(badMime.error, /mime_type/);
      const noBoundary = await app.request('/v1/resources', { method: 'POST', headers: { 'content-type': 'multipart/form-data' }, body: 'x' });
      await errorOf(noBoundary, 400);
      const cutOff = await app.request('/v1/resources', {
        method: 'POST',
        headers: { 'content-type': 'multipart/form-data; boundary=zz' },
        body: '--zz\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\npartial content without the end',
      });
      await errorOf(cutOff, 400);
      assert.deepEqual(blobFiles(app), []);
      assert.deepEqual(tempFiles(app), []);
    });

    it('checks every name and directory_path with the one path-safety check, wherever it comes from (400, nothing stored)', async () => {
      const badNames: [string, RegExp][] = [
        ['..', /'\.\.'/],
        ['.', /'\.'/],
        ['a\\b.txt', /'\\'/],
        ['..\\..\\evil', /'\\'/],
        ['dir/file.txt', /single name without '\/'/],
        ['../../etc/passwd', /single name without '\/'/],
        ['a\u0000b', /NUL/],
        ['a\u001fb', /control characters/],
        ['a\u0085b', /control characters/],
        ['x'.repeat(256), /at most 255 characters/],
      ];
      const badDirectories: [string, RegExp][] = [
        ['/a/../b', /'\.\.' segments/],
        ['..', /'\.\.' segments/],
        ['/docs/..', /'\.\.' segments/],
        ['/a/./b', /'\.' segments/],
        ['/a//b', /empty segments/],
        ['\\server\\share', /'\\'/],
        ['/a\u0000', /NUL/],
        ['/a\nb', /control characters/],
        [`/${'x'.repeat(256)}`, /over 255 characters/],
        [`/${'abc/'.repeat(1100)}`, /at most 4096 characters/],
      ];
      const resource = await created(await uploadRaw(app, bytesOf(3), '?name=keep.bin&directory_path=%2Fkeep'));
      const failures: string[] = [];
      const expect = async (label: string, response: Response, message: RegExp): Promise<void> => {
        const text = await response.text();
        const error = response.status === 400 ? (JSON.parse(text) as { error: string }).error : '';
        if (!message.test(error)) failures.push(`${label} → ${response.status} ${text.slice(0, 160)}`);
      };
      for (const [name, message] of badNames) {
        const label = JSON.stringify(name.slice(0, 20));
        await expect(`raw ?name=${label}`, await uploadRaw(app, bytesOf(3), `?name=${encodeURIComponent(name)}`), message);
        await expect(`form name=${label}`, await uploadForm(app, [['name', name], ['file', bytesOf(3), 'f.bin']]), message);
        await expect(`query name=${label} under a form`, await uploadForm(app, [['file', bytesOf(3), 'f.bin']], { query: `?name=${encodeURIComponent(name)}` }), message);
        const patch = await app.request(`/v1/resource/${resource.id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name }) });
        await expect(`PATCH name=${label}`, patch, message);
      }
      // A file part's filename is the default name: it passes the same check (the multipart parser
      // already keeps only the last segment of a filename with '/' or '\').
      for (const filename of ['..', '.']) {
        await expect(`filename ${filename}`, await uploadForm(app, [['file', bytesOf(3), filename]]), /name must/);
      }
      for (const [directory, message] of badDirectories) {
        const label = JSON.stringify(directory.slice(0, 20));
        const query = `?name=a.bin&directory_path=${encodeURIComponent(directory)}`;
        await expect(`raw directory_path=${label}`, await uploadRaw(app, bytesOf(3), query), message);
        await expect(`form directory_path=${label}`, await uploadForm(app, [['directory_path', directory], ['file', bytesOf(3), 'f.bin']]), message);
        const patch = await app.request(`/v1/resource/${resource.id}`, {
          method: 'PATCH',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ directory_path: directory }),
        });
        await expect(`PATCH directory_path=${label}`, patch, message);
        await expect(`list ?directory_path=${label}`, await app.request(`/v1/resources?directory_path=${encodeURIComponent(directory)}`), message);
      }
      assert.deepEqual(failures, []);
      assert.deepEqual(await (await app.request(`/v1/resource/${resource.id}`)).json(), resource);
      assert.equal(blobFiles(app).length, 1, 'only the kept resource has content at rest');
    });

    it('answers 401 without a bearer token on every route', async () => {
      const id = '0190b0b0-0000-7000-8000-000000000003';
      for (const [method, url] of [
        ['POST', '/v1/resources?name=x'],
        ['GET', '/v1/resources'],
        ['GET', `/v1/resource/${id}`],
        ['GET', `/v1/resource/${id}/content`],
        ['PATCH', `/v1/resource/${id}`],
        ['DELETE', `/v1/resource/${id}`],
      ]) {
        const response = await app.runloom.handle(new Request(`http://runloom.test${url}`, { method }));
        await errorOf(response, 401);
      }
    });
  });

  it('declares every resource route in the OpenAPI document', async () => {
    const document = (await (await app.request('/v1/openapi.json')).json()) as { paths: Record<string, Record<string, unknown>> };
    assert.deepEqual(Object.keys(document.paths['/v1/resources'] ?? {}).sort(), ['get', 'post']);
    assert.deepEqual(Object.keys(document.paths['/v1/resource/{id}'] ?? {}).sort(), ['delete', 'get', 'patch']);
    assert.deepEqual(Object.keys(document.paths['/v1/resource/{id}/content'] ?? {}), ['get']);
  });
});

describe('Resources over a real node:http server', () => {
  let server: TestServer;
  let origin: string;
  let token: string;

  before(async () => {
    server = await startTestServer({ uploadLimitBytes: 16 * 1024 * 1024 });
    origin = server.url;
    const client = await server.runloom.auth.createClient('acct-a');
    token = (await server.runloom.auth.issueToken({ grant_type: 'client_credentials', ...client })).access_token;
  });
  after(async () => {
    await server.close();
  });

  it('streams a chunked multipart upload in and the content back out, whole and by range', async () => {
    const bytes = bytesOf(8 * 1024 * 1024 + 3, 11);
    const upload = await fetch(`${origin}/v1/resources`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: form([['file', bytes, 'big.bin'], ['name', 'big.bin']]),
    });
    const resource = await created(upload);
    assert.equal(resource.sha256, sha256(bytes));

    const download = await fetch(`${origin}/v1/resource/${resource.id}/content`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(download.status, 200);
    assert.equal(download.headers.get('content-length'), String(bytes.byteLength));
    assert.equal(sha256(await bodyBytes(download)), resource.sha256);

    const range = await fetch(`${origin}/v1/resource/${resource.id}/content`, { headers: { authorization: `Bearer ${token}`, range: 'bytes=1048576-1048585' } });
    assert.equal(range.status, 206);
    assert.deepEqual(await bodyBytes(range), bytes.subarray(1_048_576, 1_048_586));
  });

  it('streams a raw upload without a declared length', async () => {
    const bytes = bytesOf(3 * 1024 * 1024, 12);
    const upload = await fetch(`${origin}/v1/resources?name=raw.bin`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
      body: new Blob([bytes]).stream(),
      duplex: 'half',
    } as RequestInit);
    const resource = await created(upload);
    assert.equal(resource.size_bytes, bytes.byteLength);
    assert.equal(resource.sha256, sha256(bytes));
  });

  it('answers 413 to an upload past the limit and keeps nothing of it', async () => {
    const before = blobFiles(server).length;
    const upload = await fetch(`${origin}/v1/resources?name=huge.bin`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
      body: new Blob([bytesOf(17 * 1024 * 1024)]).stream(),
      duplex: 'half',
    } as RequestInit).catch((error: unknown) => error);
    // The server may answer and close before the client has sent everything: either way no 2xx.
    if (upload instanceof Response) await errorOf(upload, 413);
    // The server may answer before it has dropped the partial upload: wait for its temp file to go.
    await waitUntil(() => tempFiles(server).length === 0, 'the refused upload\'s temp file to be removed');
    assert.equal(blobFiles(server).length, before);
    assert.deepEqual(tempFiles(server), []);
  });
});
