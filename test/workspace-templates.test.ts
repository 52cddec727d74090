import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { MAX_TEMPLATE_BYTES } from '../packages/core/src/domain/workspaces/workspace-template-schemas';
import { createTestSchema, TEST_DATABASE_URL, type TestSchema } from '../packages/core/test-support/postgres-test-store';
import { GitHttpServer } from './support/git-http-server';
import { startTestRunloom, type TestRunloom } from './support/harness';
import { jsonCalls } from './support/json-calls';

interface ErrorBody {
  error: string;
  code: string;
  details?: { path: string; message: string }[];
}

interface Template {
  id: string;
  name: string;
  description: string | null;
  files?: { path: string; content?: string; content_base64?: string }[];
  source?: { url: string; ref: string | null };
}

const BINARY = Uint8Array.from([0, 1, 2, 253, 254, 255]);

function describeTemplates(store: 'embedded store' | 'PostgreSQL'): void {
  describe(`workspace templates (${store}, docs/api.md#workspace-templates)`, function () {
    this.timeout(60_000);
    let app: TestRunloom;
    let git: GitHttpServer;
    let schema: TestSchema | undefined;

    before(async () => {
      if (store === 'PostgreSQL') schema = createTestSchema();
      app = await startTestRunloom({
        rateLimit: 0,
        allowPrivateNetwork: true,
        // Room for a template at its byte limit in one JSON body.
        jsonBodyLimitBytes: 2 * MAX_TEMPLATE_BYTES,
        ...(schema ? { databaseUrl: `${TEST_DATABASE_URL}?schema=${schema.schema}` } : {}),
      });
      git = await GitHttpServer.start();
      await git.createRepository('starter', { 'README.md': '# starter\n', 'src/main.txt': 'hello from git\n' });
    });
    after(async () => {
      await app?.close();
      await git?.close();
      await schema?.drop();
    });

    const { send, answer } = jsonCalls(() => app);

    async function createTemplate(body: Record<string, unknown>, account?: string): Promise<Template> {
      return (await answer<{ data: Template }>(send('/workspaces/templates', 'POST', body, account), 201)).data;
    }

    async function workspaceFile(workspaceId: string, file: string): Promise<Uint8Array> {
      const files = await app.runloom.workspaces.files('acct-a', workspaceId);
      return files.readBytes(file);
    }

    /** The workspace roots on disk and the account's listed workspaces: what a failed create must leave as it was. */
    async function workspacesState(): Promise<{ roots: string[]; listed: string[] }> {
      const listed = (await answer<{ data: { id: string }[] }>(send('/workspaces?limit=500', 'GET'), 200)).data.map((workspace) => workspace.id);
      return { roots: fs.readdirSync(path.join(app.dataDir, 'workspaces')).sort(), listed };
    }

    it('creates a template of files (text and base64) → 201 {data: template}, reads it back whole, lists it by path and size', async () => {
      const body = {
        name: 'starter',
        description: 'a README and a logo',
        files: [
          { path: 'README.md', content: '# Hello\n' },
          { path: 'assets/logo.bin', content_base64: Buffer.from(BINARY).toString('base64') },
          { path: '.runloom/workspace-config.runloom.yaml', content: 'models:\n  default: {provider: openai, model: gpt-4o}\n' },
        ],
      };
      const created = await answer<{ message: string; data: Template }>(send('/workspaces/templates', 'POST', body), 201);
      assert.equal(typeof created.message, 'string');
      const template = created.data;
      assert.deepEqual({ name: template.name, description: template.description, files: template.files, source: template.source }, { ...body, source: undefined });
      assert.deepEqual(await answer(send(`/workspaces/templates/${template.id}`, 'GET'), 200), { data: template });
      const listed = await answer<{ data: Template[] }>(send('/workspaces/templates', 'GET'), 200);
      const summary = listed.data.find((candidate) => candidate.id === template.id);
      assert.deepEqual(summary?.files, [
        { path: 'README.md', size: 8 },
        { path: 'assets/logo.bin', size: BINARY.length },
        { path: '.runloom/workspace-config.runloom.yaml', size: body.files[2]!.content!.length },
      ]);
    });

    it('a workspace made from it gets every file byte for byte, and its config reads from the template’s file', async () => {
      const template = await createTemplate({
        name: 'copy me',
        files: [
          { path: 'notes/today.md', content: 'ünïcödé ✓\n' },
          { path: 'data.bin', content_base64: Buffer.from(BINARY).toString('base64') },
          { path: '.runloom/workspace-config.runloom.yaml', content: '# from the template\nmodels:\n  default: {provider: groq, model: llama-3}\n' },
        ],
      });
      const workspace = (await answer<{ data: { id: string; template_id: string } }>(send('/workspaces', 'POST', { name: 'from template', template_id: template.id }), 201)).data;
      assert.equal(workspace.template_id, template.id);
      assert.equal(new TextDecoder().decode(await workspaceFile(workspace.id, 'notes/today.md')), 'ünïcödé ✓\n');
      assert.deepEqual(await workspaceFile(workspace.id, 'data.bin'), BINARY);
      const config = await answer<{ data: unknown }>(send(`/workspace/${workspace.id}/config`, 'GET'), 200);
      assert.deepEqual(config.data, { models: { default: { provider: 'groq', model: 'llama-3' } } });
    });

    it('refuses bad templates with 400 naming the field: unsafe, repeated or clashing paths, both or neither of files and source, both contents, bad base64', async () => {
      const file = (filePath: string) => ({ path: filePath, content: 'x' });
      for (const [files, detailPath] of [
        ...['../escape', '/absolute', 'a\\b', 'a//b', 'a/./b', 'nul\u0000', 'tab\there', ''].map((hostile) => [[file(hostile)], 'files.0.path'] as const),
        [[file('same'), file('same')], 'files.1.path'],
        [[file('a'), file('a/b')], 'files.1.path'],
        [[{ path: 'both', content: 'x', content_base64: 'eA==' }], 'files.0'],
        [[{ path: 'neither' }], 'files.0'],
        [[{ path: 'bad', content_base64: 'not base64!' }], 'files.0.content_base64'],
      ] as const) {
        const refused = await answer<ErrorBody>(send('/workspaces/templates', 'POST', { name: 'bad', files }), 400);
        assert.equal(refused.code, 'VALIDATION_FAILED');
        assert.ok(
          refused.details!.some((detail) => detail.path === detailPath),
          `${JSON.stringify(files)}: ${JSON.stringify(refused.details)}`,
        );
      }
      for (const body of [{ name: 'none' }, { name: 'both', files: [], source: { url: git.url('starter') } }]) {
        const refused = await answer<ErrorBody>(send('/workspaces/templates', 'POST', body), 400);
        assert.match(refused.error, /exactly one of files and source/);
      }
      for (const url of ['ftp://example.com/repo.git', 'not a url', 'https://user:secret@example.com/repo.git']) {
        const refused = await answer<ErrorBody>(send('/workspaces/templates', 'POST', { name: 'remote', source: { url } }), 400);
        assert.ok(!refused.error.includes('secret'), refused.error);
      }
      await answer(send('/workspaces/templates', 'POST', { name: '', files: [] }), 400);
    });

    it('bounds a template: at most 1000 files and 5 MiB of content', async () => {
      const tooMany = Array.from({ length: 1001 }, (_, index) => ({ path: `f${index}`, content: '' }));
      const many = await answer<ErrorBody>(send('/workspaces/templates', 'POST', { name: 'many', files: tooMany }), 400);
      assert.match(many.error, /at most 1000 files/);
      const big = [{ path: 'big.bin', content_base64: Buffer.alloc(MAX_TEMPLATE_BYTES + 3).toString('base64') }];
      const large = await answer<ErrorBody>(send('/workspaces/templates', 'POST', { name: 'large', files: big }), 400);
      assert.match(large.error, new RegExp(`at most ${MAX_TEMPLATE_BYTES} bytes`));
      await createTemplate({ name: 'at the limit', files: [{ path: 'big.bin', content_base64: Buffer.alloc(MAX_TEMPLATE_BYTES).toString('base64') }] });
    });

    it('another account’s template is 404 to read and to make a workspace from, exactly like a missing one', async () => {
      const template = await createTemplate({ name: 'private', files: [{ path: 'secret.txt', content: 'mine' }] }, 'acct-owner');
      for (const id of [template.id, randomUUID()]) {
        const read = await answer<ErrorBody>(send(`/workspaces/templates/${id}`, 'GET'), 404);
        assert.deepEqual(read, { error: `workspace template ${id} not found`, code: 'NOT_FOUND' });
        const made = await answer<ErrorBody>(send('/workspaces', 'POST', { name: 'stolen', template_id: id }), 404);
        assert.deepEqual(made, read);
      }
      const listed = await answer<{ data: Template[] }>(send('/workspaces/templates', 'GET'), 200);
      assert.ok(!listed.data.some((candidate) => candidate.id === template.id));
    });

    it('a git source: the new workspace is a clone of that ref', async () => {
      const template = await createTemplate({ name: 'from git', source: { url: git.url('starter'), ref: 'main' } });
      assert.deepEqual(template.source, { url: git.url('starter'), ref: 'main' });
      assert.equal(template.files, undefined);
      const workspace = (await answer<{ data: { id: string } }>(send('/workspaces', 'POST', { name: 'cloned', template_id: template.id }), 201)).data;
      assert.equal(new TextDecoder().decode(await workspaceFile(workspace.id, 'src/main.txt')), 'hello from git\n');
      const files = await app.runloom.workspaces.files('acct-a', workspace.id);
      assert.equal((await files.stat('.git'))?.type, 'directory');
    });

    it('a failed copy leaves no workspace: no record, no folder (a ref the remote lacks → 422, an unreachable remote → 422)', async () => {
      const before = await workspacesState();
      for (const source of [{ url: git.url('starter'), ref: 'no-such-branch' }, { url: 'http://127.0.0.1:1/nothing.git' }]) {
        const template = await createTemplate({ name: 'broken source', source });
        const refused = await answer<ErrorBody>(send('/workspaces', 'POST', { name: 'doomed', template_id: template.id }), 422);
        assert.equal(refused.code, 'REMOTE_FAILED');
      }
      assert.deepEqual(await workspacesState(), before);
    });

    it('through the facade: create, get, list and the same validation', async () => {
      const service = app.runloom.workspaceTemplates;
      const template = await service.create('acct-facade', { name: 'library', files: [{ path: 'a.txt', content: 'a' }] });
      assert.deepEqual(await service.get('acct-facade', template.id), template);
      assert.deepEqual(
        (await service.list('acct-facade', { limit: 50, offset: 0 })).map((listed) => listed.id),
        [template.id],
      );
      await assert.rejects(service.create('acct-facade', { name: 'bad', files: [{ path: '../x', content: 'a' }] }), /files\.0\.path/);
    });
  });
}

describeTemplates('embedded store');
describeTemplates('PostgreSQL');
