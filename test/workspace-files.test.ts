import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ContainerModule } from 'inversify';
import { createRunloom, DocumentConverter, type PublishedWorkspaceEvent, type Runloom } from '../packages/core/src/index';
import { SofficeDocumentConverter } from '../packages/core/src/node';
import { unzip } from '../packages/core/src/adapters/archive-writer.contract';
import { minimalDocx } from '../packages/core/src/adapters/document-converter.contract';
import { HOSTILE_PATHS } from '../packages/core/src/adapters/workspace-file-system.contract';
import { ManualClock } from '../packages/core/src/testing/manual-clock';
import { createTestSchema, TEST_DATABASE_URL, type TestSchema } from '../packages/core/test-support/postgres-test-store';
import { listen } from '../packages/server-adapter/src/serve';
import { startTestRunloom, type TestRunloom } from './support/harness';
import { startTestServer, type TestServer } from './support/server';

/**
 * docs/api.md#workspace-files: every file and directory route through HTTP — uploads (direct and
 * through a signed URL), downloads with ETag and ranges, moves, deletes, zip, PDF, path search —
 * with the events each change publishes, the refusals (hostile paths on every route, archived
 * workspaces, sizes, replays) and the facade.
 */

const ACCOUNT = 'acct-files';
const UPLOAD_LIMIT = 256 * 1024;

type Caller = (path: string, init?: RequestInit & { account?: string }) => Promise<Response>;

async function createWorkspace(request: Caller, account = ACCOUNT): Promise<string> {
  const response = await request('/workspaces', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'files' }), account });
  assert.equal(response.status, 201, await response.clone().text());
  return ((await response.json()) as { data: { id: string } }).data.id;
}

function json(method: string, body: unknown): RequestInit {
  return { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

/** Every event published on the workspace from now on, in order. */
function recordEvents(runloom: Runloom, workspaceId: string): { events: PublishedWorkspaceEvent['event'][]; stop(): void } {
  const events: PublishedWorkspaceEvent['event'][] = [];
  const subscription = runloom.workspaceEvents.subscribe(workspaceId, (published) => events.push(published.event));
  return { events, stop: () => subscription.unsubscribe() };
}

describe('workspace files over HTTP', function () {
  this.timeout(60_000);
  let t: TestRunloom;
  let ws: string;
  const q = (value: string): string => encodeURIComponent(value);

  before(async () => {
    t = await startTestRunloom({ rateLimit: 0, uploadLimitBytes: UPLOAD_LIMIT });
    ws = await createWorkspace(t.request);
  });
  after(() => t?.close());

  const call = (route: string, init: RequestInit & { account?: string } = {}): Promise<Response> =>
    t.request(`/workspace/${ws}${route}`, { account: ACCOUNT, ...init });

  describe('direct upload and download', () => {
    it('stores the bytes of a non-JSON body (201), replaces them (200), and publishes file.created then file.updated', async () => {
      const recorder = recordEvents(t.runloom, ws);
      const created = await call(`/files?path=${q('notes/hello.txt')}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello world' });
      assert.equal(created.status, 201);
      const answer = await created.json();
      assert.equal(answer.message, 'file created');
      assert.deepEqual({ ...answer.data, mtime: typeof answer.data.mtime }, { path: 'notes/hello.txt', type: 'file', size: 11, mtime: 'string' });
      const replaced = await call(`/files?path=${q('notes/hello.txt')}`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: 'hello again' });
      assert.equal(replaced.status, 200);
      assert.equal((await replaced.json()).message, 'file replaced');
      recorder.stop();
      assert.deepEqual(recorder.events, [
        { type: 'file.created', path: 'notes/hello.txt', size: 11 },
        { type: 'file.updated', path: 'notes/hello.txt', size: 11 },
      ]);
    });

    it('streams a download with Content-Type by extension, ETag, 304, ranges and HEAD', async () => {
      await call(`/files?path=${q('doc.md')}`, { method: 'POST', headers: { 'content-type': 'text/markdown' }, body: '# title\nbody' });
      const whole = await call(`/file?path=${q('doc.md')}`);
      assert.equal(whole.status, 200);
      assert.equal(await whole.text(), '# title\nbody');
      assert.match(whole.headers.get('content-type')!, /^text\/markdown/);
      assert.match(whole.headers.get('content-disposition')!, /^inline; filename="doc.md"/);
      assert.equal(whole.headers.get('content-length'), '12');
      const etag = whole.headers.get('etag')!;
      assert.match(etag, /^"[0-9a-f]+-[0-9a-f]+"$/);

      const notModified = await call(`/file?path=${q('doc.md')}`, { headers: { 'if-none-match': etag } });
      assert.equal(notModified.status, 304);
      const partial = await call(`/file?path=${q('doc.md')}`, { headers: { range: 'bytes=2-6' } });
      assert.equal(partial.status, 206);
      assert.equal(partial.headers.get('content-range'), 'bytes 2-6/12');
      assert.equal(await partial.text(), 'title');
      const past = await call(`/file?path=${q('doc.md')}`, { headers: { range: 'bytes=50-' } });
      assert.equal(past.status, 416);
      assert.equal(past.headers.get('content-range'), 'bytes */12');

      const head = await call(`/file?path=${q('doc.md')}`, { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.equal(head.headers.get('content-length'), '12');
      assert.equal(await head.text(), '');

      await call(`/files?path=${q('doc.md')}`, { method: 'POST', headers: { 'content-type': 'text/markdown' }, body: '# changed, longer' });
      assert.equal((await call(`/file?path=${q('doc.md')}`, { headers: { 'if-none-match': etag } })).status, 200, 'a new version has a new ETag');
    });

    it('serves active types as a sandboxed attachment and unknown extensions as bytes', async () => {
      await call(`/files?path=${q('page.html')}`, { method: 'POST', headers: { 'content-type': 'text/html' }, body: '<script>alert(1)</script>' });
      const page = await call(`/file?path=${q('page.html')}`);
      assert.match(page.headers.get('content-type')!, /^text\/html/);
      assert.match(page.headers.get('content-disposition')!, /^attachment;/);
      assert.equal(page.headers.get('content-security-policy'), 'sandbox');
      assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
      await call(`/files?path=${q('blob.unknownext')}`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: 'x' });
      assert.equal((await call(`/file?path=${q('blob.unknownext')}`)).headers.get('content-type'), 'application/octet-stream');
    });

    it('refuses content over the upload limit with 413 and keeps nothing of it', async () => {
      const big = new Uint8Array(UPLOAD_LIMIT + 1);
      const declared = await call(`/files?path=${q('big.bin')}`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: big });
      assert.equal(declared.status, 413);
      const streamed = await call(`/files?path=${q('big.bin')}`, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream' },
        body: new ReadableStream({
          start(controller) {
            controller.enqueue(big);
            controller.close();
          },
        }),
        duplex: 'half',
      } as RequestInit);
      assert.equal(streamed.status, 413);
      assert.equal((await call(`/file?path=${q('big.bin')}`)).status, 404);
      const asked = await call(`/files?path=${q('big.bin')}`, json('POST', { size: UPLOAD_LIMIT + 1 }));
      assert.equal(asked.status, 413);
    });

    it('answers 400 to a body cut off before its end, and keeps nothing of it', async () => {
      let sent = false;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent) controller.error(new Error('connection reset'));
          else controller.enqueue(new TextEncoder().encode('the first part'));
          sent = true;
        },
      });
      const answer = await call(`/files?path=${q('cut.txt')}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body, duplex: 'half' } as RequestInit);
      assert.equal(answer.status, 400);
      assert.match((await answer.json()).error, /cut off: connection reset/);
      assert.equal((await call(`/file?path=${q('cut.txt')}`)).status, 404);
    });

    it('creates an empty file at once for size 0', async () => {
      const answer = await call(`/files?path=${q('empty/new.txt')}`, json('POST', { size: 0, content_type: 'text/plain' }));
      assert.equal(answer.status, 201);
      assert.deepEqual((await answer.json()).data.size, 0);
      const read = await call(`/file?path=${q('empty/new.txt')}`);
      assert.equal(read.status, 200);
      assert.equal(await read.text(), '');
    });

    it('answers 400 for a JSON body that is not {size, content_type}', async () => {
      for (const body of [{}, { size: -1 }, { size: 1.5 }, { size: '10' }]) {
        assert.equal((await call(`/files?path=x.txt`, json('POST', body))).status, 400, JSON.stringify(body));
      }
      const malformed = await call(`/files?path=x.txt`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"size":' });
      assert.equal(malformed.status, 400);
    });
  });

  describe('directories, moves and deletes', () => {
    it('creates directories recursively (201, then 200), moves and deletes them with their contents', async () => {
      const recorder = recordEvents(t.runloom, ws);
      assert.equal((await call(`/directory?path=${q('tree/a/b')}`, { method: 'POST' })).status, 201);
      const again = await call(`/directory?path=${q('tree/a/b')}`, { method: 'POST' });
      assert.equal(again.status, 200);
      assert.deepEqual((await again.json()).data.type, 'directory');
      await call(`/files?path=${q('tree/a/b/leaf.txt')}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'leaf' });

      const intoItself = await call(`/directory/path?path=tree&newPath=${q('tree/inner')}`, { method: 'PATCH' });
      assert.equal(intoItself.status, 400);
      const moved = await call(`/directory/path?path=tree&newPath=${q('moved/tree')}`, { method: 'PATCH' });
      assert.equal(moved.status, 200, await moved.clone().text());
      assert.deepEqual((await moved.json()).data.path, 'moved/tree');
      assert.equal(await (await call(`/file?path=${q('moved/tree/a/b/leaf.txt')}`)).text(), 'leaf');
      assert.equal((await call(`/file?path=${q('tree/a/b/leaf.txt')}`)).status, 404);

      const deleted = await call(`/directory?path=${q('moved')}`, { method: 'DELETE' });
      assert.equal(deleted.status, 200);
      assert.deepEqual(await deleted.json(), { message: 'directory deleted', data: { path: 'moved' } });
      assert.equal((await call(`/file?path=${q('moved/tree/a/b/leaf.txt')}`)).status, 404);
      assert.equal((await call(`/directory?path=${q('moved')}`, { method: 'DELETE' })).status, 404);
      recorder.stop();
      assert.deepEqual(
        recorder.events.map((event) => event.type),
        ['directory.created', 'file.created', 'directory.moved', 'directory.deleted'],
      );
      assert.deepEqual(recorder.events[2], { type: 'directory.moved', path: 'moved/tree', oldPath: 'tree', newPath: 'moved/tree' });
    });

    it('renames a file (missing parents made), refuses an existing target (409), deletes it (file.deleted)', async () => {
      await call(`/files?path=${q('m/one.txt')}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'one' });
      await call(`/files?path=${q('m/two.txt')}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'two' });
      const recorder = recordEvents(t.runloom, ws);
      assert.equal((await call(`/file/path?path=${q('m/one.txt')}&newPath=${q('m/two.txt')}`, { method: 'PATCH' })).status, 409);
      const moved = await call(`/file/path?path=${q('m/one.txt')}&newPath=${q('n/deep/uno.txt')}`, { method: 'PATCH' });
      assert.equal(moved.status, 200);
      assert.equal(await (await call(`/file?path=${q('n/deep/uno.txt')}`)).text(), 'one');
      assert.equal((await call(`/file/path?path=${q('m/one.txt')}&newPath=x.txt`, { method: 'PATCH' })).status, 404);
      const deleted = await call(`/file?path=${q('n/deep/uno.txt')}`, { method: 'DELETE' });
      assert.deepEqual(await deleted.json(), { message: 'file deleted', data: { path: 'n/deep/uno.txt' } });
      recorder.stop();
      assert.deepEqual(recorder.events, [
        { type: 'file.moved', path: 'n/deep/uno.txt', oldPath: 'm/one.txt', newPath: 'n/deep/uno.txt', size: 3 },
        { type: 'file.deleted', path: 'n/deep/uno.txt' },
      ]);
    });

    it('answers 409 for a file route on a directory and the reverse', async () => {
      await call(`/directory?path=kind/dir`, { method: 'POST' });
      await call(`/files?path=${q('kind/file.txt')}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'f' });
      assert.equal((await call(`/file?path=${q('kind/dir')}`)).status, 409);
      assert.equal((await call(`/file?path=${q('kind/dir')}`, { method: 'DELETE' })).status, 409);
      assert.equal((await call(`/directory?path=${q('kind/file.txt')}`, { method: 'DELETE' })).status, 409);
      assert.equal((await call(`/directory?path=${q('kind/file.txt')}`, { method: 'POST' })).status, 409);
      assert.equal((await call(`/files?path=${q('kind/dir')}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' })).status, 409);
      assert.equal((await call(`/directory/download?path=${q('kind/file.txt')}`)).status, 409);
    });
  });

  describe('path search', () => {
    before(async () => {
      for (const file of ['s/a.md', 's/b.txt', 's/deep/c.md', 's/deep/deeper/d.md']) {
        await call(`/files?path=${q(file)}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: file });
      }
    });

    it('matches the glob relative to the root, sorted, with stats on request', async () => {
      const found = await call('/search/paths', json('POST', { globPattern: 's/**/*.md' }));
      assert.equal(found.status, 200);
      assert.deepEqual((await found.json()).data, [
        { path: 's/a.md', type: 'file' },
        { path: 's/deep/c.md', type: 'file' },
        { path: 's/deep/deeper/d.md', type: 'file' },
      ]);
      const withStats = (await (await call('/search/paths', json('POST', { globPattern: 's/*', stats: true }))).json()).data;
      assert.deepEqual(
        withStats.map((entry: any) => [entry.path, entry.type, entry.size, typeof entry.mtime]),
        [
          ['s/a.md', 'file', 6, 'string'],
          ['s/b.txt', 'file', 7, 'string'],
          ['s/deep', 'directory', 0, 'string'],
        ],
      );
    });

    it('counts depth from 1 at the root', async () => {
      const shallow = (await (await call('/search/paths', json('POST', { globPattern: 's/**/*.md', maxDepth: 3 }))).json()).data;
      assert.deepEqual(shallow.map((entry: any) => entry.path), ['s/a.md', 's/deep/c.md']);
      assert.equal((await call('/search/paths', json('POST', { globPattern: '**', maxDepth: 64 }))).status, 200);
    });

    it('refuses maxDepth out of range and invalid globs with 400', async () => {
      for (const body of [{ globPattern: '**', maxDepth: 65 }, { globPattern: '**', maxDepth: 0 }, { globPattern: '' }, { globPattern: 's/[a' }, { globPattern: '*.{md' }, { globPattern: '../**' }]) {
        const answer = await call('/search/paths', json('POST', body));
        assert.equal(answer.status, 400, JSON.stringify(body));
        assert.equal(typeof (await answer.json()).error, 'string');
      }
    });
  });

  describe('zip download', () => {
    it('streams a zip of a directory, and of the whole workspace for an empty path', async () => {
      await call(`/files?path=${q('z/one.txt')}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'one' });
      await call(`/files?path=${q('z/sub/two.bin')}`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array([1, 2, 3]) });
      const answer = await call(`/directory/download?path=z`);
      assert.equal(answer.status, 200);
      assert.equal(answer.headers.get('content-type'), 'application/zip');
      assert.match(answer.headers.get('content-disposition')!, /^attachment; filename="z.zip"/);
      const zip = Buffer.from(await answer.arrayBuffer());
      assert.equal(answer.headers.get('content-length'), String(zip.length), 'stored entries: the size is known before the first byte');
      const entries = await unzip(zip);
      assert.deepEqual([...entries.keys()], ['one.txt', 'sub/', 'sub/two.bin']);
      assert.equal(Buffer.from(entries.get('one.txt')!).toString(), 'one');
      assert.deepEqual([...entries.get('sub/two.bin')!], [1, 2, 3]);

      for (const whole of ['/directory/download', '/directory/download?path=']) {
        const all = await unzip(Buffer.from(await (await call(whole)).arrayBuffer()));
        assert.ok(all.has('z/sub/two.bin') && all.has('z/') && all.has('z/one.txt'), [...all.keys()].join(', '));
      }
      assert.equal((await call(`/directory/download?path=nowhere`)).status, 404);
    });

    it('refuses with 409, naming the file, a directory holding a name a zip reader would take as a drive', async () => {
      assert.equal((await call(`/files?path=${q('odd/c:notes.txt')}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' })).status, 201);
      const answer = await call(`/directory/download?path=odd`);
      assert.equal(answer.status, 409);
      assert.match((await answer.json()).error, /^'odd\/c:notes\.txt' cannot be put in a zip: .*drive/);
      // Deeper, the same name is no drive: the directory above it zips.
      const zip = await unzip(Buffer.from(await (await call(`/directory/download`)).arrayBuffer()));
      assert.ok(zip.has('odd/c:notes.txt'), [...zip.keys()].join(', '));
    });
  });

  describe('PDF', function () {
    this.timeout(180_000);

    it('passes a PDF through and converts a DOCX with LibreOffice', async () => {
      const pdfBytes = '%PDF-1.4\n%fake but passed through\n';
      await call(`/files?path=${q('p/given.pdf')}`, { method: 'POST', headers: { 'content-type': 'application/pdf' }, body: pdfBytes });
      const given = await call(`/file/pdf?path=${q('p/given.pdf')}`);
      assert.equal(given.status, 200);
      assert.equal(given.headers.get('content-type'), 'application/pdf');
      assert.equal(await given.text(), pdfBytes);

      await call(`/files?path=${q('p/letter.docx')}`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: Buffer.from(await minimalDocx('Dear reader')) });
      const converted = await call(`/file/pdf?path=${q('p/letter.docx')}`);
      assert.equal(converted.status, 200, await converted.clone().text());
      assert.equal(converted.headers.get('content-type'), 'application/pdf');
      assert.match(converted.headers.get('content-disposition')!, /filename="letter.pdf"/);
      const pdf = Buffer.from(await converted.arrayBuffer());
      assert.equal(pdf.subarray(0, 5).toString('latin1'), '%PDF-');
      const cached = await call(`/file/pdf?path=${q('p/letter.docx')}`, { headers: { 'if-none-match': converted.headers.get('etag')! } });
      assert.equal(cached.status, 304);
    });

    it('refuses other types with 400 and a missing file with 404', async () => {
      await call(`/files?path=${q('p/notes.txt')}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'text' });
      const other = await call(`/file/pdf?path=${q('p/notes.txt')}`);
      assert.equal(other.status, 400);
      assert.match((await other.json()).error, /PDF.*DOC.*DOCX/);
      assert.equal((await call(`/file/pdf?path=${q('p/missing.docx')}`)).status, 404);
    });
  });

  describe('refusals on every route', () => {
    /** Every file and directory route, with `{P}` where the hostile path goes. */
    const routes: Array<[string, string, RequestInit?]> = [
      ['POST', '/files?path={P}', { headers: { 'content-type': 'text/plain' }, body: 'x' }],
      ['POST', '/files?path={P}', json('POST', { size: 3 })],
      ['POST', '/files?path={P}', json('POST', { size: 0 })],
      ['GET', '/file?path={P}'],
      ['GET', '/file/pdf?path={P}'],
      ['PATCH', '/file/path?path={P}&newPath=fine.txt'],
      ['PATCH', '/file/path?path=notes/hello.txt&newPath={P}'],
      ['DELETE', '/file?path={P}'],
      ['POST', '/directory?path={P}'],
      ['PATCH', '/directory/path?path={P}&newPath=fine'],
      ['PATCH', '/directory/path?path=notes&newPath={P}'],
      ['DELETE', '/directory?path={P}'],
      ['GET', '/directory/download?path={P}'],
    ];

    it('answers 400 for every hostile path on every route, and changes nothing', async () => {
      const before = (await (await call('/search/paths', json('POST', { globPattern: '**', maxDepth: 64 }))).json()).data;
      for (const [method, route, init] of routes) {
        for (const hostile of HOSTILE_PATHS) {
          const answer = await call(route.replace('{P}', q(hostile)), { ...init, method });
          const text = await answer.text();
          assert.equal(answer.status, 400, `${method} ${route} with ${JSON.stringify(hostile.slice(0, 40))}: ${text.slice(0, 200)}`);
          assert.match(JSON.parse(text).error, /path/i, `${method} ${route} with ${JSON.stringify(hostile.slice(0, 40))}: ${text.slice(0, 200)}`);
        }
      }
      const after = (await (await call('/search/paths', json('POST', { globPattern: '**', maxDepth: 64 }))).json()).data;
      assert.deepEqual(after, before);
    });

    it('answers 400 for a path through a symbolic link out of the root', async () => {
      const root = (await t.runloom.workspaces.files(ACCOUNT, ws)).localRoot!;
      const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-outside-'));
      fs.writeFileSync(path.join(outside, 'secret.txt'), 'outside');
      fs.symlinkSync(outside, path.join(root, 'escape'));
      try {
        for (const [method, route, init] of routes) {
          const answer = await call(route.replace('{P}', q('escape/secret.txt')), { ...init, method });
          assert.equal(answer.status, 400, `${method} ${route}: ${await answer.text()}`);
        }
        assert.equal(fs.readFileSync(path.join(outside, 'secret.txt'), 'utf8'), 'outside');
      } finally {
        fs.rmSync(path.join(root, 'escape'));
        fs.rmSync(outside, { recursive: true, force: true });
      }
    });

    it('answers 404 for another account’s workspace on every route', async () => {
      for (const [method, route, init] of [...routes, ['POST', '/search/paths', json('POST', { globPattern: '**' })] as [string, string, RequestInit]]) {
        const answer = await t.request(`/workspace/${ws}${route.replace('{P}', 'elsewhere/name.txt')}`, { ...init, method, account: 'acct-files-other' });
        assert.equal(answer.status, 404, `${method} ${route}: ${await answer.text()}`);
      }
    });

    it('answers 409 on every change while the workspace is archived, and reads still work', async () => {
      const archived = await createWorkspace(t.request);
      const on = (route: string, init: RequestInit = {}): Promise<Response> => t.request(`/workspace/${archived}${route}`, { account: ACCOUNT, ...init });
      await on(`/files?path=${q('kept.txt')}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'kept' });
      await on('/directory?path=dir', { method: 'POST' });
      assert.equal((await on('/lifecycle-events', json('POST', { event: 'archived' }))).status, 201);
      const changes: Array<[string, RequestInit]> = [
        [`/files?path=${q('new.txt')}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' }],
        [`/files?path=${q('new.txt')}`, json('POST', { size: 3 })],
        [`/file/path?path=kept.txt&newPath=moved.txt`, { method: 'PATCH' }],
        [`/file?path=kept.txt`, { method: 'DELETE' }],
        ['/directory?path=other', { method: 'POST' }],
        ['/directory/path?path=dir&newPath=moved', { method: 'PATCH' }],
        ['/directory?path=dir', { method: 'DELETE' }],
      ];
      for (const [route, init] of changes) assert.equal((await on(route, init)).status, 409, route);
      assert.equal(await (await on('/file?path=kept.txt')).text(), 'kept');
    });
  });

  describe('the facade', () => {
    it('offers the same operations to Node callers, with the same refusals', async () => {
      const files = t.runloom.workspaceFiles;
      const { entry, created } = await files.write(ACCOUNT, ws, 'facade/a.txt', 'from node');
      assert.equal(created, true);
      assert.equal(entry.size, 9);
      const download = await files.download(ACCOUNT, ws, 'facade/a.txt');
      assert.equal(await new Response(await download.read()).text(), 'from node');
      assert.deepEqual(await files.moveFile(ACCOUNT, ws, 'facade/a.txt', 'facade/b.txt').then((moved) => moved.path), 'facade/b.txt');
      assert.deepEqual(await files.stat(ACCOUNT, ws, 'facade/b.txt').then(({ type, size }) => ({ type, size })), { type: 'file', size: 9 });
      await assert.rejects(files.stat(ACCOUNT, ws, 'facade/a.txt'), { code: 'NOT_FOUND' });
      assert.deepEqual(await files.searchPaths(ACCOUNT, ws, { globPattern: 'facade/*' }), [{ path: 'facade/b.txt', type: 'file' }]);
      await assert.rejects(files.write(ACCOUNT, ws, '../x', 'y'), { name: 'DomainError', code: 'VALIDATION_FAILED' });
      await assert.rejects(files.searchPaths(ACCOUNT, ws, { globPattern: '**', maxDepth: 65 }), { code: 'VALIDATION_FAILED' });
    });
  });
});

describe('signed upload URLs through a real server', function () {
  this.timeout(60_000);
  let server: TestServer;
  let token: string;
  let ws: string;

  before(async () => {
    server = await startTestServer({ rateLimit: 0, bootstrapClients: [`${ACCOUNT}:signed-client:signed-client-secret-0123456789`] });
    token = (await server.runloom.auth.issueToken({ grant_type: 'client_credentials', client_id: 'signed-client', client_secret: 'signed-client-secret-0123456789' })).access_token;
    ws = await createWorkspace((route, init = {}) => fetch(`${server.url}${route}`, { ...init, headers: { ...(init.headers as object), authorization: `Bearer ${token}` } }));
  });
  after(() => server?.close());

  async function ticket(filePath: string, body: unknown): Promise<{ path: string; upload_url: string; expires_at: string }> {
    const answer = await fetch(`${server.url}/workspace/${ws}/files?path=${encodeURIComponent(filePath)}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    assert.equal(answer.status, 201, await answer.clone().text());
    return (await answer.json()).data;
  }

  const download = (filePath: string): Promise<Response> =>
    fetch(`${server.url}/workspace/${ws}/file?path=${encodeURIComponent(filePath)}`, { headers: { authorization: `Bearer ${token}` } });

  it('answers {path, upload_url, expires_at}; a PUT without bearer stores the bytes once; a replay is 409', async () => {
    const issued = await ticket('up/report.txt', { size: 12, content_type: 'text/plain' });
    assert.equal(issued.path, 'up/report.txt');
    assert.ok(issued.upload_url.startsWith(`${server.url}/workspace/${ws}/file/upload?`), issued.upload_url);
    const expiresIn = Date.parse(issued.expires_at) - Date.now();
    assert.ok(expiresIn > 10 * 60_000 && expiresIn <= 15 * 60_000, issued.expires_at);

    const put = await fetch(issued.upload_url, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: 'twelve bytes' });
    assert.equal(put.status, 201, await put.clone().text());
    const answer = await put.json();
    assert.equal(answer.message, 'file created');
    assert.equal(answer.data.size, 12);
    assert.equal(await (await download('up/report.txt')).text(), 'twelve bytes');

    const replay = await fetch(issued.upload_url, { method: 'PUT', body: 'twelve bytez' });
    assert.equal(replay.status, 409);
    assert.match((await replay.json()).error, /already used/);
    assert.equal(await (await download('up/report.txt')).text(), 'twelve bytes');
  });

  it('refuses a body of another size (400) and keeps no file; the URL stays usable', async () => {
    const issued = await ticket('up/sized.bin', { size: 8 });
    for (const body of ['short', 'much too long for it']) {
      const put = await fetch(issued.upload_url, { method: 'PUT', body });
      assert.equal(put.status, 400, body);
      assert.match((await put.json()).error, /exactly 8 bytes/);
      assert.equal((await download('up/sized.bin')).status, 404);
    }
    const chunked = await fetch(issued.upload_url, {
      method: 'PUT',
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('12345678'));
          controller.enqueue(new TextEncoder().encode('9'));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    assert.equal(chunked.status, 400);
    assert.equal((await download('up/sized.bin')).status, 404);
    assert.equal((await fetch(issued.upload_url, { method: 'PUT', body: '12345678' })).status, 201);
  });

  it('refuses a changed URL (403) and another content type (400)', async () => {
    const issued = await ticket('up/typed.txt', { size: 2, content_type: 'text/plain' });
    const url = new URL(issued.upload_url);
    for (const [field, value] of [['size', '3'], ['path', 'up/other.txt'], ['account', 'acct-other'], ['signature', 'x'], ['expires', '9999999999']]) {
      const changed = new URL(url);
      changed.searchParams.set(field!, value!);
      const put = await fetch(changed, { method: 'PUT', body: field === 'size' ? 'abc' : 'ab' });
      assert.equal(put.status, 403, `${field}: ${await put.clone().text()}`);
    }
    const otherWorkspace = new URL(issued.upload_url.replace(ws, '01900000-0000-7000-8000-000000000000'));
    assert.equal((await fetch(otherWorkspace, { method: 'PUT', body: 'ab' })).status, 403);
    assert.equal((await fetch(url, { method: 'PUT', headers: { 'content-type': 'text/html' }, body: 'ab' })).status, 400);
    assert.equal((await fetch(url, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: 'ab' })).status, 201, 'bytes of no particular type');
  });
});

describe('signed upload URLs expire and stay spent across restarts', function () {
  this.timeout(60_000);

  it('refuses an expired URL (403) by the Clock, and a used one after a restart (409)', async () => {
    const clock = new ManualClock(new Date('2030-01-01T00:00:00Z'));
    const t = await startTestRunloom({ rateLimit: 0, clock });
    try {
      const ws = await createWorkspace(t.request);
      const ask = async (filePath: string): Promise<URL> => {
        const answer = await t.request(`/workspace/${ws}/files?path=${filePath}`, { ...json('POST', { size: 2 }), account: ACCOUNT });
        const data = (await answer.json()).data;
        assert.equal(data.expires_at, '2030-01-01T00:15:00.000Z');
        return new URL(data.upload_url);
      };
      const put = (url: URL): Promise<Response> => t.runloom.handle(new Request(url, { method: 'PUT', body: 'ok' }));
      const late = await ask('late.txt');
      const used = await ask('used.txt');
      assert.equal((await put(used)).status, 201);
      await t.restart();
      assert.equal((await put(used)).status, 409);
      await clock.advance(15 * 60_000);
      const expired = await put(late);
      assert.equal(expired.status, 403);
      assert.match((await expired.json()).error, /expired/);
    } finally {
      await t.close();
    }
  });
});

describe('signed upload URLs on PostgreSQL: single use across instances', function () {
  this.timeout(60_000);
  let schema: TestSchema;
  const secretKey = Buffer.alloc(32, 9).toString('base64');
  const instances: Array<{ runloom: Runloom; stop(): Promise<void>; url: string }> = [];
  const dirs: string[] = [];

  before(async () => {
    schema = createTestSchema();
    const workspacesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-shared-workspaces-'));
    dirs.push(workspacesDir);
    for (let index = 0; index < 2; index += 1) {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-'));
      dirs.push(dataDir);
      const runloom = await createRunloom({
        dataDir,
        workspacesDir,
        secretKey,
        rateLimit: 0,
        databaseUrl: `${TEST_DATABASE_URL}?schema=${schema.schema}`,
        bootstrapClients: [`${ACCOUNT}:pg-client:pg-client-secret-0123456789`],
      });
      const server = await listen(runloom, { host: '127.0.0.1', port: 0, shutdownGraceMs: 1_000 });
      instances.push({
        runloom,
        url: server.url,
        stop: async () => {
          await server.stop();
          await runloom.close();
        },
      });
    }
  });
  after(async () => {
    for (const instance of instances) await instance.stop();
    await schema?.drop();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a URL issued by one instance is accepted once, by either instance, even when both are asked at once', async () => {
    const [first, second] = instances as [(typeof instances)[0], (typeof instances)[0]];
    const token = (await first.runloom.auth.issueToken({ grant_type: 'client_credentials', client_id: 'pg-client', client_secret: 'pg-client-secret-0123456789' })).access_token;
    const ws = await createWorkspace((route, init = {}) => fetch(`${first.url}${route}`, { ...init, headers: { ...(init.headers as object), authorization: `Bearer ${token}` } }));
    const answer = await fetch(`${first.url}/workspace/${ws}/files?path=shared.txt`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ size: 6 }),
    });
    const uploadUrl = new URL((await answer.json()).data.upload_url);
    const on = (instance: { url: string }): URL => new URL(`${uploadUrl.pathname}${uploadUrl.search}`, instance.url);
    const racing = await Promise.all([first, second].map((instance) => fetch(on(instance), { method: 'PUT', body: 'shared' })));
    assert.deepEqual(racing.map((put) => put.status).sort(), [201, 409], 'two instances at once: one stores, the other refuses');
    assert.equal((await fetch(on(first), { method: 'PUT', body: 'shared' })).status, 409);
    assert.equal((await fetch(on(second), { method: 'PUT', body: 'shared' })).status, 409);
  });
});

describe('file/pdf without LibreOffice', () => {
  it('answers 501 saying to install libreoffice-writer', async () => {
    const missing = new ContainerModule(({ rebind }) => {
      rebind(DocumentConverter).toConstantValue(new SofficeDocumentConverter({ cacheDir: fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-pdf-')), binary: '/nonexistent/soffice' }));
    });
    const t = await startTestRunloom({ rateLimit: 0, modules: [missing] });
    try {
      const ws = await createWorkspace(t.request);
      await t.request(`/workspace/${ws}/files?path=a.docx`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: Buffer.from(await minimalDocx('x')), account: ACCOUNT });
      const answer = await t.request(`/workspace/${ws}/file/pdf?path=a.docx`, { account: ACCOUNT });
      assert.equal(answer.status, 501);
      const body = await answer.json();
      assert.equal(body.code, 'NOT_IMPLEMENTED');
      assert.match(body.error, /libreoffice-writer/);
    } finally {
      await t.close();
    }
  });
});
