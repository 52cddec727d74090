import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { RunloomExtensionApi } from '../src/client/extension';
import { threadOf } from '../src/client/threads-view';
import type { ThreadListItem } from '../src/common/protocol';
import { screenshot } from './screenshots';
import { renderedWhen } from './threads.spec';
import { REMOTE_REPLY, REMOTE_THREAD } from './vendor-script';

/** The runner serves a `runloom serve` on loopback with a workspace and a thread, and names it here. */
const remote = { url: process.env.RUNLOOM_TEST_REMOTE_URL!, clientId: process.env.RUNLOOM_TEST_REMOTE_CLIENT_ID!, secret: process.env.RUNLOOM_TEST_REMOTE_CLIENT_SECRET! };

/** The Threads view's threads once `accept` holds for them (the view redraws when the server (re)starts). */
function threadsWhen(api: RunloomExtensionApi, accept: (threads: ThreadListItem[]) => boolean): Promise<ThreadListItem[]> {
  return new Promise((resolve) => {
    const check = async (): Promise<void> => {
      // While the server restarts a listing fails: the next redraw looks again.
      const nodes = await Promise.resolve(api.threadsView.getChildren()).catch(() => []);
      const threads = nodes.flatMap((node) => threadOf(node) ?? []);
      if (!accept(threads)) return;
      subscription.dispose();
      resolve(threads);
    };
    const subscription = api.threadsView.onDidChangeTreeData(() => void check());
    void check();
  });
}

export function remoteTests(): void {
  describe('Remote mode', () => {
    const settings = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration('runloom.remote');

    after(async () => {
      await settings().update('url', undefined, vscode.ConfigurationTarget.Global);
      await settings().update('clientId', undefined, vscode.ConfigurationTarget.Global);
    });

    it('shows a remote runloom serve\'s threads once its URL, client id and secret are set, and streams a reply from it', async () => {
      assert.ok(remote.url && remote.clientId && remote.secret, 'the runner names the remote server');
      const api = await vscode.extensions.getExtension<RunloomExtensionApi>('runloom.runloom-vscode')!.activate();
      await api.ready;
      const remoteThreads = threadsWhen(api, (threads) => threads.some((thread) => thread.title === REMOTE_THREAD));
      assert.equal(await vscode.commands.executeCommand('runloom.setRemoteClientSecret', remote.secret), true);
      await settings().update('clientId', remote.clientId, vscode.ConfigurationTarget.Global);
      await settings().update('url', remote.url, vscode.ConfigurationTarget.Global);
      const [thread] = await remoteThreads;
      const panel = await api.openThread(thread!.workspaceId, thread!.threadId);
      await panel.send('Hello over there', 'openai/gpt-4o');
      const rendered = await renderedWhen(panel, (shown) => !shown.streaming && shown.messages.length === 2);
      assert.deepEqual(
        rendered.messages.map(({ role, text }) => ({ role, text })),
        [
          { role: 'user', text: 'Hello over there' },
          { role: 'assistant', text: REMOTE_REPLY },
        ],
      );
      await screenshot('remote-thread');
      panel.panel.dispose();
    });
  });
}
