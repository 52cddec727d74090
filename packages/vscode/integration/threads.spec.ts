import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { RunloomExtensionApi } from '../src/client/extension';
import type { RenderedChat } from '../src/client/chat-panel';
import type { ThreadListItem } from '../src/common/protocol';
import { screenshot } from './screenshots';
import { FIRST_REPLY, PARTIAL_REPLY } from './vendor-script';

/**
 * The runner (test/vscode-extension.test.ts) serves a fake OpenAI on loopback and names it in the
 * environment; its first reply streams whole, its second stops halfway until the run ends.
 */
const vendorUrl = process.env.RUNLOOM_TEST_OPENAI_URL!;
const vendorKey = process.env.RUNLOOM_TEST_OPENAI_KEY!;

async function extensionApi(): Promise<RunloomExtensionApi> {
  const extension = vscode.extensions.getExtension<RunloomExtensionApi>('runloom.runloom-vscode');
  assert.ok(extension, 'the Runloom extension is installed');
  return extension.activate();
}

/** Asks the panel what it shows until `accept` holds for it (the page answers each ask). */
export async function renderedWhen(panel: { rendered(): Promise<RenderedChat> }, accept: (rendered: RenderedChat) => boolean): Promise<RenderedChat> {
  for (;;) {
    const rendered = await panel.rendered();
    if (accept(rendered)) return rendered;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export function threadTests(): void {
  describe('Threads panel', () => {
    let api: RunloomExtensionApi;
    before(async () => {
      assert.ok(vendorUrl && vendorKey, 'the runner names the fake vendor');
      api = await extensionApi();
      await api.ready;
      assert.equal(await vscode.commands.executeCommand('runloom.setProviderApiKey', { provider: 'openai', api_key: vendorKey, base_url: vendorUrl }), true);
      await vscode.commands.executeCommand('workbench.view.extension.runloom');
    });

    it('streams a reply from the vendor into the chat panel and keeps it in the thread', async () => {
      const created = await vscode.commands.executeCommand<ThreadListItem>('runloom.newThread', 'Greeting');
      const panel = await api.openThread(created.workspaceId, created.threadId);
      await screenshot('thread-new');
      await panel.send('Say hello', 'openai/gpt-4o');
      const rendered = await renderedWhen(panel, (shown) => !shown.streaming && shown.messages.length === 2);
      assert.deepEqual(
        rendered.messages.map(({ role, text, status }) => ({ role, text, status })),
        [
          { role: 'user', text: 'Say hello', status: undefined },
          { role: 'assistant', text: FIRST_REPLY, status: undefined },
        ],
      );
      await screenshot('thread-reply');
      // The thread file in the folder has the reply too: a reopened panel shows it.
      panel.panel.dispose();
      const reopened = await api.openThread(created.workspaceId, created.threadId);
      const again = await renderedWhen(reopened, (shown) => shown.messages.length === 2);
      assert.equal(again.messages[1]!.text, FIRST_REPLY);
      const files = await vscode.workspace.findFiles(`.runloom/threads/${created.threadId}.json`);
      assert.equal(files.length, 1, 'the thread is a file of the open folder');
    });

    it('stop keeps the partial reply, marked cancelled', async () => {
      const created = await vscode.commands.executeCommand<ThreadListItem>('runloom.newThread', 'Interrupted');
      const panel = await api.openThread(created.workspaceId, created.threadId);
      await panel.send('Tell me a long story', 'openai/gpt-4o');
      const streaming = await renderedWhen(panel, (shown) => shown.streaming && (shown.messages[1]?.text ?? '').startsWith(PARTIAL_REPLY));
      await screenshot('thread-streaming');
      assert.equal(await panel.stop(), true);
      const stopped = await renderedWhen(panel, (shown) => !shown.streaming);
      const partial = stopped.messages[1]!;
      assert.equal(partial.status, 'cancelled');
      assert.equal(partial.text, streaming.messages[1]!.text, 'what had streamed stays, nothing more');
      assert.ok(!partial.text.endsWith('ends'), `the reply stopped before its end: ${partial.text}`);
      panel.panel.dispose();
      const reopened = await api.openThread(created.workspaceId, created.threadId);
      const saved = await renderedWhen(reopened, (shown) => shown.messages.length === 2);
      assert.deepEqual({ text: saved.messages[1]!.text, status: saved.messages[1]!.status }, { text: partial.text, status: 'cancelled' });
    });

    it('lists the threads of the folder in the Threads view, newest first', async () => {
      const items = await api.threadsView.getChildren();
      const titles = items.map((node) => api.threadsView.getTreeItem(node).label);
      assert.deepEqual(titles, ['Interrupted', 'Greeting']);
      await screenshot('threads-view');
    });
  });
}
