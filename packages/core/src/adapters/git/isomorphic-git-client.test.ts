import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { GitHttpServer } from '../../../../../test/support/git-http-server';
import { GitError } from '../../ports/git-client';
import { describeGitClientContract } from '../git-client.contract';
import { MemoryWorkspaceFileSystems } from '../memory/memory-workspace-file-system';
import { GuardedHttpClient } from '../node/guarded-http-client';
import { NodeWorkspaceFileSystems } from '../node/node-workspace-file-system';
import { IsomorphicGitClient } from './isomorphic-git-client';

const CREDENTIALS = { username: 'x-access-token', password: 'contract-remote-secret' };

async function testBed(credentials: typeof CREDENTIALS | undefined) {
  const remote = await GitHttpServer.start({ credentials });
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'git-client-'));
  const workspaces = new NodeWorkspaceFileSystems(root);
  let count = 0;
  return {
    // The remote is on loopback: the policy lets private networks in, as --allow-private-network does.
    client: new IsomorphicGitClient({ http: new GuardedHttpClient({ egress: { allowPrivateNetwork: true } }) }),
    remote: {
      credentials,
      createRepository: async (name: string, files: Record<string, string>) => {
        await remote.createRepository(name, files);
        return remote.url(name);
      },
      commitAsSomeoneElse: (name: string, files: Record<string, string>, message: string) => remote.commitAsSomeoneElse(name, files, message),
      log: (name: string) => remote.log(name),
    },
    workspace: () => workspaces.open(`workspace-${++count}`),
    elsewhere: () => new MemoryWorkspaceFileSystems().open('elsewhere'),
    unreachableUrl: 'http://127.0.0.1:1/nothing.git',
    close: async () => {
      await remote.close();
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}

describeGitClientContract('isomorphic-git, remote with HTTP Basic', () => testBed(CREDENTIALS));
describeGitClientContract('isomorphic-git, public remote', () => testBed(undefined));

describe('IsomorphicGitClient: every request under the HttpClient’s egress policy', function () {
  this.timeout(30_000);

  it('refuses a loopback remote unless the policy allows it, before anything is sent', async () => {
    const remote = await GitHttpServer.start();
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'git-egress-'));
    try {
      await remote.createRepository('guarded', { 'a.txt': 'a\n' });
      const client = new IsomorphicGitClient({ http: new GuardedHttpClient({ egress: { allowPrivateNetwork: false } }) });
      const workspace = await new NodeWorkspaceFileSystems(root).open('w');
      await assert.rejects(client.clone(workspace, { url: remote.url('guarded') }), (error: unknown) => {
        assert.ok(error instanceof GitError);
        assert.equal(error.kind, 'refused');
        assert.match(error.message, /127\.0\.0\.1 is a loopback address/);
        return true;
      });
      assert.deepEqual(remote.authorizations, [], 'no request reached the remote');
      assert.equal(await client.isRepository(workspace), false, 'a failed clone leaves no repository');

      const allowed = new IsomorphicGitClient({ http: new GuardedHttpClient({ egress: { allowPrivateNetwork: false, allow: [new URL(remote.origin).host] } }) });
      assert.equal((await allowed.clone(workspace, { url: remote.url('guarded') })).branch, 'main', '--egress-allow host:port lets it in');
    } finally {
      await remote.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('gives up on a remote that accepts the connection and never answers', async () => {
    const silent = http.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'git-silent-'));
    try {
      const client = new IsomorphicGitClient({ http: new GuardedHttpClient({ egress: { allowPrivateNetwork: true } }), answerTimeoutMs: 200 });
      const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/silent.git`;
      await assert.rejects(client.clone(await new NodeWorkspaceFileSystems(root).open('w'), { url }), (error: unknown) => {
        assert.ok(error instanceof GitError);
        assert.equal(error.kind, 'unreachable');
        assert.equal(error.message, `${url}: no answer within 0.2 s`);
        return true;
      });
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
