import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type GitClient, type GitCredentials, GitError, type GitFailureKind } from '../ports/git-client';
import type { WorkspaceFileSystem } from '../ports/workspace-file-system';

/** A git HTTP server the suite clones from and pushes to, inspected with a client other than the one under test. */
export interface GitRemoteFixture {
  /** What the remote accepts (HTTP Basic); undefined when it asks for none. */
  credentials?: GitCredentials;
  /** Creates a repository with `files` in one commit on `main`; answers its URL. */
  createRepository(name: string, files: Record<string, string>): Promise<string>;
  /** Another client's commit of `files` on `main`, pushed; answers its hash. */
  commitAsSomeoneElse(name: string, files: Record<string, string>, message: string): Promise<string>;
  /** The commits of `main`, newest first, as `<hash> <subject>`. */
  log(name: string): Promise<string[]>;
}

export interface GitClientTestBed {
  client: GitClient;
  remote: GitRemoteFixture;
  /** The files of a new, empty workspace on this machine's disk. */
  workspace(): Promise<WorkspaceFileSystem>;
  /** The files of a workspace kept elsewhere than on a disk (no `localRoot`). */
  elsewhere(): Promise<WorkspaceFileSystem>;
  /** A URL on which nothing answers. */
  unreachableUrl: string;
  close(): Promise<void>;
}

const AUTHOR = { name: 'Contract Suite', email: 'contract@example.test' };

async function rejectsWith(work: Promise<unknown>, kind: GitFailureKind, message?: RegExp): Promise<GitError> {
  let failure: unknown;
  await work.then(
    () => assert.fail(`expected a GitError ${kind}`),
    (error: unknown) => {
      failure = error;
    },
  );
  assert.ok(failure instanceof GitError, `expected a GitError ${kind}, got ${String(failure)}`);
  assert.equal(failure.kind, kind, failure.message);
  if (message) assert.match(failure.message, message);
  return failure;
}

function text(files: WorkspaceFileSystem, file: string): Promise<string> {
  return files.readBytes(file).then((bytes) => new TextDecoder().decode(bytes));
}

/**
 * The `GitClient` port's guarantees (ports/git-client.ts), against a real git HTTP server: clone,
 * status, commit, push, pull, their failures by kind, and credentials that never show.
 */
export function describeGitClientContract(name: string, setup: () => Promise<GitClientTestBed>): void {
  describe(`GitClient contract: ${name}`, function () {
    this.timeout(60_000);
    let bed: GitClientTestBed;
    let repositories = 0;

    before(async () => {
      bed = await setup();
    });
    after(async () => {
      await bed?.close();
    });

    async function repository(files: Record<string, string>): Promise<{ name: string; url: string }> {
      const repositoryName = `contract-${++repositories}`;
      return { name: repositoryName, url: await bed.remote.createRepository(repositoryName, files) };
    }

    async function cloned(files: Record<string, string>): Promise<{ name: string; url: string; workspace: WorkspaceFileSystem }> {
      const created = await repository(files);
      const workspace = await bed.workspace();
      await bed.client.clone(workspace, { url: created.url, credentials: bed.remote.credentials });
      return { ...created, workspace };
    }

    it('clones the default branch; files already in the workspace stay, untracked', async () => {
      const { url } = await repository({ 'README.md': '# r\n', 'docs/a.md': 'a\n' });
      const workspace = await bed.workspace();
      await workspace.writeFile('notes.txt', 'mine\n');
      assert.equal(await bed.client.isRepository(workspace), false);
      const head = await bed.client.clone(workspace, { url, credentials: bed.remote.credentials });
      assert.equal(head.branch, 'main');
      assert.match(head.commit ?? '', /^[0-9a-f]{40}$/);
      assert.equal(await bed.client.isRepository(workspace), true);
      assert.deepEqual(await bed.client.head(workspace), head);
      assert.equal(await text(workspace, 'docs/a.md'), 'a\n');
      assert.equal(await text(workspace, 'notes.txt'), 'mine\n');
      assert.deepEqual((await bed.client.status(workspace)).changes, [{ path: 'notes.txt', change: 'added' }]);
      await rejectsWith(bed.client.clone(workspace, { url, credentials: bed.remote.credentials }), 'already_a_repository');
    });

    it('lists changes by path, within the filter', async () => {
      const { workspace } = await cloned({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'dir/c.txt': 'c\n' });
      await workspace.writeFile('a.txt', 'changed\n');
      await workspace.delete('b.txt');
      await workspace.writeFile('dir/new.txt', 'new\n');
      await workspace.writeFile('.runloom/state.json', '{}');
      const all = await bed.client.status(workspace);
      assert.deepEqual(all.changes, [
        { path: '.runloom/state.json', change: 'added' },
        { path: 'a.txt', change: 'modified' },
        { path: 'b.txt', change: 'deleted' },
        { path: 'dir/new.txt', change: 'added' },
      ]);
      assert.deepEqual((await bed.client.status(workspace, { exclude: ['.runloom'] })).changes.map((change) => change.path), ['a.txt', 'b.txt', 'dir/new.txt']);
      assert.deepEqual((await bed.client.status(workspace, { paths: ['dir'] })).changes.map((change) => change.path), ['dir/new.txt']);
    });

    it('commits the changes within the filter, then has nothing to commit; pushes what a plain clone then sees', async () => {
      const { name, url, workspace } = await cloned({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
      await workspace.writeFile('a.txt', 'a2\n');
      await workspace.delete('b.txt');
      await workspace.writeFile('.runloom/state.json', '{}');
      await workspace.writeFile('later.txt', 'later\n');
      const first = await bed.client.commit(workspace, { message: 'first', author: AUTHOR, exclude: ['.runloom'], paths: ['a.txt', 'b.txt'] });
      assert.deepEqual(first.changes, [
        { path: 'a.txt', change: 'modified' },
        { path: 'b.txt', change: 'deleted' },
      ]);
      assert.deepEqual((await bed.client.status(workspace, { exclude: ['.runloom'] })).changes, [{ path: 'later.txt', change: 'added' }]);
      const second = await bed.client.commit(workspace, { message: 'second', author: AUTHOR, exclude: ['.runloom'] });
      assert.deepEqual(second.changes, [{ path: 'later.txt', change: 'added' }]);
      await rejectsWith(bed.client.commit(workspace, { message: 'third', author: AUTHOR, exclude: ['.runloom'] }), 'nothing_to_commit');

      await bed.client.push(workspace, { url, branch: 'main', credentials: bed.remote.credentials });
      assert.deepEqual((await bed.remote.log(name)).slice(0, 2), [`${second.commit} second`, `${first.commit} first`]);
    });

    it('pulls: up to date, fast-forward, a merge; refuses a dirty working tree and a push that is not a fast-forward', async () => {
      const { name, url, workspace } = await cloned({ 'a.txt': 'a\n' });
      const remote = { url, credentials: bed.remote.credentials };
      assert.equal((await bed.client.pull(workspace, { ...remote, branch: 'main', author: AUTHOR })).outcome, 'up_to_date');
      const theirs = await bed.remote.commitAsSomeoneElse(name, { 'b.txt': 'b\n' }, 'theirs');
      assert.deepEqual(await bed.client.pull(workspace, { ...remote, branch: 'main', author: AUTHOR }), { branch: 'main', commit: theirs, outcome: 'fast_forward' });
      assert.equal(await text(workspace, 'b.txt'), 'b\n');

      await bed.remote.commitAsSomeoneElse(name, { 'c.txt': 'c\n' }, 'theirs again');
      await workspace.writeFile('mine.txt', 'mine\n');
      await rejectsWith(bed.client.pull(workspace, { ...remote, branch: 'main', author: AUTHOR }), 'conflict', /mine\.txt/);
      await bed.client.commit(workspace, { message: 'mine', author: AUTHOR });
      await rejectsWith(bed.client.push(workspace, { ...remote, branch: 'main' }), 'rejected');
      const merged = await bed.client.pull(workspace, { ...remote, branch: 'main', author: AUTHOR });
      assert.equal(merged.outcome, 'merged');
      assert.equal(await text(workspace, 'c.txt'), 'c\n');
      await bed.client.push(workspace, { ...remote, branch: 'main' });
      assert.equal((await bed.remote.log(name))[0]!.split(' ')[0], merged.commit);
    });

    it('refuses a pull whose merge conflicts with the local commits, leaving the working copy as it was', async () => {
      const { name, url, workspace } = await cloned({ 'a.txt': 'a\n' });
      await bed.remote.commitAsSomeoneElse(name, { 'a.txt': 'theirs\n' }, 'theirs');
      await workspace.writeFile('a.txt', 'mine\n');
      const mine = await bed.client.commit(workspace, { message: 'mine', author: AUTHOR });
      await rejectsWith(bed.client.pull(workspace, { url, credentials: bed.remote.credentials, branch: 'main', author: AUTHOR }), 'conflict');
      assert.equal((await bed.client.head(workspace)).commit, mine.commit);
      assert.equal(await text(workspace, 'a.txt'), 'mine\n');
    });

    it('fails by kind, and never shows the credentials or writes them into the repository', async () => {
      const { url } = await repository({ 'a.txt': 'a\n' });
      if (bed.remote.credentials) {
        const wrong = { username: bed.remote.credentials.username, password: 'wrong-contract-secret' };
        const refused = await rejectsWith(bed.client.clone(await bed.workspace(), { url, credentials: wrong }), 'auth');
        assert.ok(!refused.message.includes(wrong.password));
        await rejectsWith(bed.client.clone(await bed.workspace(), { url }), 'auth');
        const workspace = await bed.workspace();
        await bed.client.clone(workspace, { url, credentials: bed.remote.credentials });
        const config = readFileSync(path.join(workspace.localRoot!, '.git', 'config'), 'utf8');
        assert.ok(!config.includes(bed.remote.credentials.password), 'the credentials stay out of .git/config');
      }
      await rejectsWith(bed.client.clone(await bed.workspace(), { url: `${url.replace(/\.git$/, '')}-missing.git`, credentials: bed.remote.credentials }), 'not_found');
      await rejectsWith(bed.client.clone(await bed.workspace(), { url: bed.unreachableUrl }), 'unreachable');
      await rejectsWith(bed.client.clone(await bed.workspace(), { url: 'ssh://git@example.com/r.git' }), 'invalid_url', /http or https/);
      const withSecret = url.replace('://', '://user:url-secret@');
      const invalid = await rejectsWith(bed.client.clone(await bed.workspace(), { url: withSecret }), 'invalid_url');
      assert.ok(!invalid.message.includes('url-secret'));
    });

    it('refuses a workspace that is not a working copy, or whose files are not on this disk', async () => {
      const workspace = await bed.workspace();
      await rejectsWith(bed.client.status(workspace), 'not_a_repository');
      await rejectsWith(bed.client.commit(workspace, { message: 'm', author: AUTHOR }), 'not_a_repository');
      await rejectsWith(bed.client.head(workspace), 'not_a_repository');
      const elsewhere = await bed.elsewhere();
      await rejectsWith(bed.client.isRepository(elsewhere), 'workspace_not_local');
      await rejectsWith(bed.client.clone(elsewhere, { url: bed.unreachableUrl }), 'workspace_not_local');
    });
  });
}
