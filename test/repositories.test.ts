import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ContainerModule } from 'inversify';
import { Logger, WorkspaceFileSystems } from '../packages/core/src/index';
import { MemoryWorkspaceFileSystems } from '../packages/core/src/adapters/memory/memory-workspace-file-system';
import { RepositoryCloner } from '../packages/core/src/domain/repositories/repository-cloner';
import { WorkspaceEvents, type WorkspaceEvent } from '../packages/core/src/domain/workspace-events/workspace-events';
import { RecordingLogger } from '../packages/core/src/testing/recording-logger';
import { GitHttpServer } from './support/git-http-server';
import { createTestSchema, TEST_DATABASE_URL, type TestSchema } from '../packages/core/test-support/postgres-test-store';
import { startTestRunloom, type TestRunloom } from './support/harness';
import { waitUntil } from './support/wait';

const ACCOUNT = 'acct-a';
/** The token the remote accepts; no answer, error or log may ever show it. */
const TOKEN = 'ghp_s3cretRepositoryToken4242';
const WRONG_TOKEN = 'ghp_wrongRepositoryToken9999';
const AUTHOR = { name: 'Ada Lovelace', email: 'ada@example.test' };

interface Answer {
  status: number;
  text: string;
  body: any;
}

async function call(app: TestRunloom, method: string, url: string, body?: unknown, account = ACCOUNT): Promise<Answer> {
  const response = await app.request(url, {
    method,
    account,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, text, body: text ? JSON.parse(text) : undefined };
}

async function createWorkspace(app: TestRunloom, name = 'repo work'): Promise<string> {
  const created = await call(app, 'POST', '/workspaces', { name });
  assert.equal(created.status, 201, created.text);
  return created.body.data.id as string;
}

/** Fails when any of the secrets shows anywhere in the answer. */
function assertNoSecret(answer: Answer, ...secrets: string[]): void {
  for (const secret of secrets) assert.ok(!answer.text.includes(secret), `the answer shows a secret: ${answer.text}`);
}

function describeRepositories(store: 'embedded store' | 'PostgreSQL'): void {
  describe(`repositories (${store}): workspaces connected to git remotes (real git http-backend on loopback)`, function () {
    this.timeout(60_000);
    let remote: GitHttpServer;
    let app: TestRunloom;
    let schema: TestSchema | undefined;
    /** Every line the server logs while the tests below run: none may show a token. */
    const logger = new RecordingLogger();

    before(async () => {
      // The remote checks HTTP Basic the way GitHub does for App tokens: username x-access-token.
      remote = await GitHttpServer.start({ credentials: { username: 'x-access-token', password: TOKEN } });
      // The remote is on loopback: only a server started with --allow-private-network may reach it.
      if (store === 'PostgreSQL') schema = createTestSchema();
      app = await startTestRunloom({
        allowPrivateNetwork: true,
        modules: [new ContainerModule(({ rebind }) => void rebind(Logger).toConstantValue(logger))],
        ...(schema ? { databaseUrl: `${TEST_DATABASE_URL}?schema=${schema.schema}` } : {}),
      });
    });

    after(async () => {
      await app?.close();
      await remote?.close();
      await schema?.drop();
    });

    async function connect(workspaceId: string, repository: string, extra: Record<string, unknown> = {}): Promise<Answer> {
      return call(app, 'PUT', `/workspace/${workspaceId}/repository`, { url: remote.url(repository), token: TOKEN, provider: 'github', author: AUTHOR, ...extra });
    }

    it('connects (token sealed, answered masked), clones, and the files appear through the workspace files', async () => {
      await remote.createRepository('notes', { 'README.md': '# notes\n', 'docs/guide.md': 'guide\n' });
      const workspaceId = await createWorkspace(app);
      const events: WorkspaceEvent[] = [];
      const subscription = app.runloom.container.get<WorkspaceEvents>(WorkspaceEvents).subscribe(workspaceId, ({ event }) => events.push(event));

      const connected = await connect(workspaceId, 'notes');
      assert.equal(connected.status, 201, connected.text);
      assert.equal(connected.body.message, 'repository connected');
      assert.deepEqual(
        { ...connected.body.data, created_at: undefined, updated_at: undefined },
        {
          workspace_id: workspaceId,
          provider: 'github',
          url: remote.url('notes'),
          branch: null,
          username: 'x-access-token',
          token: '****4242',
          author: AUTHOR,
          created_at: undefined,
          updated_at: undefined,
          cloned_at: null,
          pulled_at: null,
          pushed_at: null,
        },
      );
      assertNoSecret(connected, TOKEN);

      const cloned = await call(app, 'POST', `/workspace/${workspaceId}/repository/clone`);
      assert.equal(cloned.status, 200, cloned.text);
      assert.equal(cloned.body.data.branch, 'main', 'the clone records the default branch');
      assert.equal(cloned.body.data.status.branch, 'main');
      assert.match(cloned.body.data.status.commit, /^[0-9a-f]{40}$/);
      assert.deepEqual(cloned.body.data.status.changes, []);
      assert.ok(cloned.body.data.cloned_at);

      const files = await app.runloom.workspaces.files(ACCOUNT, workspaceId);
      assert.equal(new TextDecoder().decode(await files.readBytes('README.md')), '# notes\n');
      assert.equal(new TextDecoder().decode(await files.readBytes('docs/guide.md')), 'guide\n');
      const listed = await call(app, 'GET', `/workspace/${workspaceId}/repository`);
      assert.equal(listed.status, 200);
      assertNoSecret(listed, TOKEN);

      await waitUntil(() => events.filter((event) => event.type === 'repository.updated').length >= 2, 'the connected and cloned events');
      subscription.unsubscribe();
      assert.deepEqual(
        events.filter((event) => event.type === 'repository.updated').map((event) => event.action),
        ['connected', 'cloned'],
      );
      // Credentials went only to requests the remote challenged, in the Authorization header.
      assert.ok(remote.authorizations.some((header) => header === `Basic ${Buffer.from(`x-access-token:${TOKEN}`).toString('base64')}`));
      const gitConfig = fs.readFileSync(path.join(files.localRoot!, '.git', 'config'), 'utf8');
      assert.ok(!gitConfig.includes(TOKEN), 'the token is never written into the repository');
    });

    it('commits an edit made through the workspace files and pushes it: a plain git clone sees the commit', async () => {
      await remote.createRepository('roundtrip', { 'README.md': 'v1\n', 'old.txt': 'old\n' });
      const workspaceId = await createWorkspace(app);
      assert.equal((await connect(workspaceId, 'roundtrip')).status, 201);
      assert.equal((await call(app, 'POST', `/workspace/${workspaceId}/repository/clone`)).status, 200);

      const files = await app.runloom.workspaces.files(ACCOUNT, workspaceId);
      await files.writeFile('README.md', 'v2\n');
      await files.writeFile('src/new.ts', 'export const x = 1;\n');
      await files.delete('old.txt');
      // Runloom's own state never lands in the user's repository.
      await files.writeFile('.runloom/state.json', '{}');

      const status = await call(app, 'GET', `/workspace/${workspaceId}/repository/status`);
      assert.equal(status.status, 200, status.text);
      assert.deepEqual(status.body.data.changes, [
        { path: 'README.md', change: 'modified' },
        { path: 'old.txt', change: 'deleted' },
        { path: 'src/new.ts', change: 'added' },
      ]);

      const committed = await call(app, 'POST', `/workspace/${workspaceId}/repository/commit`, { message: 'Edit through Runloom' });
      assert.equal(committed.status, 200, committed.text);
      assert.equal(committed.body.message, 'committed 3 change(s)');
      assert.equal(committed.body.data.changes.length, 3);
      const commit = committed.body.data.commit as string;

      const pushed = await call(app, 'POST', `/workspace/${workspaceId}/repository/push`);
      assert.equal(pushed.status, 200, pushed.text);
      assert.deepEqual(pushed.body.data, { branch: 'main', commit });

      const clone = await remote.cloneWithCli('roundtrip');
      try {
        assert.equal(fs.readFileSync(path.join(clone, 'README.md'), 'utf8'), 'v2\n');
        assert.equal(fs.readFileSync(path.join(clone, 'src/new.ts'), 'utf8'), 'export const x = 1;\n');
        assert.ok(!fs.existsSync(path.join(clone, 'old.txt')));
        assert.ok(!fs.existsSync(path.join(clone, '.runloom')));
      } finally {
        fs.rmSync(clone, { recursive: true, force: true });
      }
      const [latest] = await remote.log('roundtrip');
      assert.equal(latest, `${commit} Edit through Runloom`);

      const nothing = await call(app, 'POST', `/workspace/${workspaceId}/repository/commit`, { message: 'again' });
      assert.equal(nothing.status, 409);
      assert.match(nothing.body.error, /no changes to commit/);
    });

    it('pulls what someone else pushed; refuses a pull over uncommitted changes and a push that is not a fast-forward', async () => {
      await remote.createRepository('shared', { 'a.txt': 'a\n' });
      const workspaceId = await createWorkspace(app);
      assert.equal((await connect(workspaceId, 'shared', { branch: 'main' })).status, 201);
      assert.equal((await call(app, 'POST', `/workspace/${workspaceId}/repository/clone`)).status, 200);

      const upToDate = await call(app, 'POST', `/workspace/${workspaceId}/repository/pull`);
      assert.equal(upToDate.status, 200, upToDate.text);
      assert.equal(upToDate.body.data.outcome, 'up_to_date');

      const theirs = await remote.commitAsSomeoneElse('shared', { 'b.txt': 'from someone else\n' }, 'their change');
      const pulled = await call(app, 'POST', `/workspace/${workspaceId}/repository/pull`);
      assert.equal(pulled.status, 200, pulled.text);
      assert.deepEqual(pulled.body.data, { branch: 'main', commit: theirs, outcome: 'fast_forward' });
      const files = await app.runloom.workspaces.files(ACCOUNT, workspaceId);
      assert.equal(new TextDecoder().decode(await files.readBytes('b.txt')), 'from someone else\n');

      // A local commit while the remote moves on: the push is refused, a pull merges, then the push goes.
      await remote.commitAsSomeoneElse('shared', { 'c.txt': 'c\n' }, 'another of theirs');
      await files.writeFile('mine.txt', 'mine\n');
      const dirtyPull = await call(app, 'POST', `/workspace/${workspaceId}/repository/pull`);
      assert.equal(dirtyPull.status, 409);
      assert.match(dirtyPull.body.error, /uncommitted change\(s\) \(mine\.txt\); commit them before pulling/);
      assert.equal((await call(app, 'POST', `/workspace/${workspaceId}/repository/commit`, { message: 'mine' })).status, 200);
      const rejected = await call(app, 'POST', `/workspace/${workspaceId}/repository/push`);
      assert.equal(rejected.status, 409);
      assert.match(rejected.body.error, /has commits this branch lacks; pull, then push again/);
      const merged = await call(app, 'POST', `/workspace/${workspaceId}/repository/pull`);
      assert.equal(merged.status, 200, merged.text);
      assert.equal(merged.body.data.outcome, 'merged');
      assert.equal((await call(app, 'POST', `/workspace/${workspaceId}/repository/push`)).status, 200);
      const log = await remote.log('shared');
      assert.equal(log[0], `${merged.body.data.commit as string} Merge branch 'main' of ${remote.url('shared')}`);
    });

    it('lists the four hosting integrations with the account’s connections through each', async () => {
      const listed = await call(app, 'GET', '/workspaces/repository-integrations', undefined, 'acct-integrations');
      assert.equal(listed.status, 200, listed.text);
      assert.deepEqual(
        listed.body.data.map((entry: { provider: string; state: string; auth: { username: string } }) => [entry.provider, entry.state, entry.auth.username]),
        [
          ['generic', 'available', 'git'],
          ['github', 'available', 'x-access-token'],
          ['gitlab', 'available', 'oauth2'],
          ['bitbucket', 'available', 'x-token-auth'],
        ],
      );
      const first = await createWorkspaceIn('acct-integrations');
      const second = await createWorkspaceIn('acct-integrations');
      await call(app, 'PUT', `/workspace/${first}/repository`, { url: 'https://github.com/octo/notes.git', token: TOKEN }, 'acct-integrations');
      await call(app, 'PUT', `/workspace/${second}/repository`, { url: 'https://github.com/octo/other.git' }, 'acct-integrations');
      const after = await call(app, 'GET', '/workspaces/repository-integrations', undefined, 'acct-integrations');
      const github = after.body.data.find((entry: { provider: string }) => entry.provider === 'github');
      assert.deepEqual([github.state, github.connected_workspaces, github.workspaces_with_token], ['connected', 2, 1]);
      assertNoSecret(after, TOKEN);
    });

    async function createWorkspaceIn(account: string): Promise<string> {
      const created = await call(app, 'POST', '/workspaces', { name: 'integrations' }, account);
      assert.equal(created.status, 201, created.text);
      return created.body.data.id as string;
    }

    it('a wrong token is a clear 422 that shows neither token, also when the credentials were written in the URL', async () => {
      await remote.createRepository('private', { 'secret.md': 'x\n' });
      const workspaceId = await createWorkspace(app);
      const wrong = await call(app, 'PUT', `/workspace/${workspaceId}/repository`, { url: remote.url('private'), token: WRONG_TOKEN, provider: 'github' });
      assert.equal(wrong.status, 201);
      assert.equal(wrong.body.data.token, '****9999');
      const refused = await call(app, 'POST', `/workspace/${workspaceId}/repository/clone`);
      assert.equal(refused.status, 422, refused.text);
      assert.equal(refused.body.code, 'REMOTE_FAILED');
      assert.match(refused.body.error, /refused the credentials \(HTTP 401\)/);
      assertNoSecret(refused, WRONG_TOKEN, TOKEN);

      const embedded = remote.url('private').replace('http://', `http://x-access-token:${WRONG_TOKEN}@`);
      const fromUrl = await call(app, 'PUT', `/workspace/${workspaceId}/repository`, { url: embedded });
      assert.equal(fromUrl.status, 200, fromUrl.text);
      assert.equal(fromUrl.body.data.url, remote.url('private'), 'the credentials are taken out of the URL');
      assert.equal(fromUrl.body.data.token, '****9999');
      assertNoSecret(fromUrl, WRONG_TOKEN);
      const again = await call(app, 'POST', `/workspace/${workspaceId}/repository/clone`);
      assert.equal(again.status, 422);
      assertNoSecret(again, WRONG_TOKEN);
      assertNoSecret(await call(app, 'GET', `/workspace/${workspaceId}/repository`), WRONG_TOKEN);

      const none = await call(app, 'PUT', `/workspace/${workspaceId}/repository`, { url: remote.url('private'), token: null });
      assert.equal(none.body.data.token, null);
      const unauthenticated = await call(app, 'POST', `/workspace/${workspaceId}/repository/clone`);
      assert.equal(unauthenticated.status, 422);
      assert.match(unauthenticated.body.error, /asks for credentials/);

      const both = await call(app, 'PUT', `/workspace/${workspaceId}/repository`, { url: embedded, token: TOKEN });
      assert.equal(both.status, 400);
      assertNoSecret(both, WRONG_TOKEN, TOKEN);
    });

    it('keeps a stored token only while the URL’s origin stays the same', async () => {
      const workspaceId = await createWorkspace(app);
      await call(app, 'PUT', `/workspace/${workspaceId}/repository`, { url: 'https://github.com/octo/a.git', token: TOKEN });
      const sameOrigin = await call(app, 'PUT', `/workspace/${workspaceId}/repository`, { url: 'https://github.com/octo/b.git' });
      assert.equal(sameOrigin.body.data.token, '****4242');
      const otherHost = await call(app, 'PUT', `/workspace/${workspaceId}/repository`, { url: 'https://gitlab.com/octo/b.git' });
      assert.equal(otherHost.body.data.token, null, 'a token is never carried over to another host');
      assert.equal(otherHost.body.data.provider, 'gitlab');
      assert.equal(otherHost.body.data.username, 'oauth2');
    });

    it('an unreachable remote and a URL that is not a git repository are clear 422s', async () => {
      const workspaceId = await createWorkspace(app);
      await call(app, 'PUT', `/workspace/${workspaceId}/repository`, { url: 'http://127.0.0.1:1/nothing.git' });
      const unreachable = await call(app, 'POST', `/workspace/${workspaceId}/repository/clone`);
      assert.equal(unreachable.status, 422, unreachable.text);
      assert.match(unreachable.body.error, /http:\/\/127\.0\.0\.1:1\/nothing\.git could not be reached: .*ECONNREFUSED/);

      await call(app, 'PUT', `/workspace/${workspaceId}/repository`, { url: remote.url('missing'), token: TOKEN, provider: 'github' });
      const missing = await call(app, 'POST', `/workspace/${workspaceId}/repository/clone`);
      assert.equal(missing.status, 422);
      assert.match(missing.body.error, /has no such repository/);
      assert.ok(!(await app.runloom.repositories.get(ACCOUNT, workspaceId)).status, 'a failed clone leaves no working copy');
    });

    it('refuses URLs that are not http(s) with 400, and bad fields naming what to fix', async () => {
      const workspaceId = await createWorkspace(app);
      for (const url of ['file:///etc/passwd', 'ssh://git@github.com/octo/notes.git', 'git@github.com:octo/notes.git', 'git://github.com/octo/notes.git', 'not a url']) {
        const refused = await call(app, 'PUT', `/workspace/${workspaceId}/repository`, { url });
        assert.equal(refused.status, 400, `${url}: ${refused.text}`);
        assert.equal(refused.body.details[0].path, 'url');
      }
      const badBranch = await call(app, 'PUT', `/workspace/${workspaceId}/repository`, { url: 'https://github.com/o/r.git', branch: '../main' });
      assert.equal(badBranch.status, 400);
      assert.equal(badBranch.body.details[0].path, 'branch');
      const badAuthor = await call(app, 'PUT', `/workspace/${workspaceId}/repository`, { url: 'https://github.com/o/r.git', author: { name: 'x\nfake', email: 'a@b' } });
      assert.equal(badAuthor.status, 400);
      const badPaths = await call(app, 'POST', `/workspace/${workspaceId}/repository/commit`, { message: 'm', paths: ['../outside'] });
      assert.equal(badPaths.status, 400);
    });

    it('answers 404 without a connection or for another account’s workspace, 409 before the clone and while archived', async () => {
      const workspaceId = await createWorkspace(app);
      for (const [method, suffix] of [['GET', ''], ['DELETE', ''], ['POST', '/clone'], ['POST', '/pull'], ['POST', '/push'], ['GET', '/status']] as const) {
        const answer = await call(app, method, `/workspace/${workspaceId}/repository${suffix}`);
        assert.equal(answer.status, 404, `${method} ${suffix}`);
        assert.match(answer.body.error, /is not connected to a repository; connect it with PUT/);
      }
      assert.equal((await connect(workspaceId, 'notes')).status, 201);
      assert.equal((await call(app, 'GET', `/workspace/${workspaceId}/repository`, undefined, 'acct-b')).status, 404);
      assert.equal((await call(app, 'PUT', `/workspace/${workspaceId}/repository`, { url: 'https://github.com/o/r.git' }, 'acct-b')).status, 404);
      const beforeClone = await call(app, 'GET', `/workspace/${workspaceId}/repository/status`);
      assert.equal(beforeClone.status, 409);
      assert.match(beforeClone.body.error, /clone first/);
      assert.equal((await call(app, 'GET', `/workspace/${workspaceId}/repository`)).body.data.status, null);

      assert.equal((await call(app, 'POST', `/workspace/${workspaceId}/lifecycle-events`, { event: 'archived' })).status, 201);
      const archived = await call(app, 'POST', `/workspace/${workspaceId}/repository/clone`);
      assert.equal(archived.status, 409);
      assert.match(archived.body.error, /archived/);
      assert.equal((await call(app, 'POST', `/workspace/${workspaceId}/lifecycle-events`, { event: 'unarchived' })).status, 201);

      const disconnected = await call(app, 'DELETE', `/workspace/${workspaceId}/repository`);
      assert.equal(disconnected.status, 200);
      assert.equal((await call(app, 'GET', `/workspace/${workspaceId}/repository`)).status, 404);
    });

    it('a clone into a workspace that already is a working copy is a 409', async () => {
      await remote.createRepository('twice', { 'x.txt': 'x\n' });
      const workspaceId = await createWorkspace(app);
      await connect(workspaceId, 'twice');
      assert.equal((await call(app, 'POST', `/workspace/${workspaceId}/repository/clone`)).status, 200);
      const again = await call(app, 'POST', `/workspace/${workspaceId}/repository/clone`);
      assert.equal(again.status, 409);
      assert.match(again.body.error, /already is a git working copy/);
    });

    it('clones a template source into a workspace’s files (RepositoryCloner)', async () => {
      await remote.createRepository('template', { 'starter.md': 'start here\n' });
      const workspaceId = await createWorkspace(app);
      const files = await app.runloom.workspaces.files(ACCOUNT, workspaceId);
      const head = await app.runloom.container.get(RepositoryCloner).cloneInto(files, { url: remote.url('template'), ref: 'main', token: TOKEN, username: 'x-access-token' });
      assert.equal(head.branch, 'main');
      assert.equal(new TextDecoder().decode(await files.readBytes('starter.md')), 'start here\n');
    });

    // Last of this block (mocha runs its tests in order): after every success and failure above.
    it('logged none of the tokens, in any line', () => {
      const logged = JSON.stringify(logger.lines);
      assert.ok(logger.lines.length > 0, 'the requests were logged');
      for (const secret of [TOKEN, WRONG_TOKEN]) assert.ok(!logged.includes(secret), 'a token was logged');
    });
  });
}

describeRepositories('embedded store');
describeRepositories('PostgreSQL');

describe('repositories: the egress policy and where the files are', function () {
  this.timeout(60_000);

  it('refuses a loopback remote unless the server allows private networks, at connect and at clone', async () => {
    const remote = await GitHttpServer.start();
    const app = await startTestRunloom();
    try {
      await remote.createRepository('local', { 'a.txt': 'a\n' });
      const workspaceId = await createWorkspace(app);
      const refused = await call(app, 'PUT', `/workspace/${workspaceId}/repository`, { url: remote.url('local') });
      assert.equal(refused.status, 400, refused.text);
      assert.match(refused.body.error, /127\.0\.0\.1 is a loopback address, which this server does not send requests to; to allow it, start the server with --egress-allow/);
      // The clone itself sends through the guarded client: refused before anything is sent.
      const files = await app.runloom.workspaces.files(ACCOUNT, workspaceId);
      const before = remote.authorizations.length;
      await assert.rejects(app.runloom.container.get(RepositoryCloner).cloneInto(files, { url: remote.url('local') }), (error: Error) => {
        assert.match(error.message, /the repository URL is refused: .*loopback address/);
        return true;
      });
      assert.equal(remote.authorizations.length, before, 'no request reached the remote');
    } finally {
      await app.close();
      await remote.close();
    }
  });

  it('answers 501 when the workspace files are not on this server’s disk', async () => {
    const app = await startTestRunloom({
      allowPrivateNetwork: true,
      modules: [new ContainerModule(({ rebind }) => void rebind(WorkspaceFileSystems).toConstantValue(new MemoryWorkspaceFileSystems()))],
    });
    try {
      const workspaceId = await createWorkspace(app);
      assert.equal((await call(app, 'PUT', `/workspace/${workspaceId}/repository`, { url: 'http://127.0.0.1:1/x.git' })).status, 201);
      const clone = await call(app, 'POST', `/workspace/${workspaceId}/repository/clone`);
      assert.equal(clone.status, 501, clone.text);
      assert.match(clone.body.error, /git needs the workspace's files on this machine's disk/);
    } finally {
      await app.close();
    }
  });
});
