import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { RunloomExtensionApi } from '../src/client/extension';
import type { ThreadListItem } from '../src/common/protocol';

type WorkspaceEvent = { type: string; [field: string]: unknown };

export function folderEventTests(): void {
  describe('Folder watcher', () => {
    it('publishes files saved, renamed and deleted in the editor as the folder\'s workspace events, and not the core\'s own writes', async () => {
      const api = await vscode.extensions.getExtension<RunloomExtensionApi>('runloom.runloom-vscode')!.activate();
      await api.ready;
      const seen: WorkspaceEvent[] = [];
      let waiting: { accept: (event: WorkspaceEvent) => boolean; resolve: () => void } | undefined;
      const subscription = api.onWorkspaceEvent(({ event }) => {
        seen.push(event);
        if (waiting?.accept(event)) waiting.resolve();
      });
      /** Resolves once an event `accept` takes has arrived (or had already). */
      const arrived = (accept: (event: WorkspaceEvent) => boolean): Promise<void> =>
        seen.some(accept) ? Promise.resolve() : new Promise((resolve) => (waiting = { accept, resolve }));
      const folder = vscode.workspace.workspaceFolders![0]!.uri;
      try {
        // The core writes the thread's file in the folder: its own event says so, the watcher must not again.
        const thread = await vscode.commands.executeCommand<ThreadListItem>('runloom.newThread', 'Watched');
        await arrived((event) => event.type === 'thread.updated' && event.threadId === thread.threadId);
        const todo = vscode.Uri.joinPath(folder, 'notes/todo.md');
        const done = vscode.Uri.joinPath(folder, 'notes/done.md');
        await vscode.workspace.fs.writeFile(todo, new TextEncoder().encode('- ship it'));
        await arrived((event) => event.type === 'file.created' && event.path === 'notes/todo.md');
        await vscode.workspace.fs.rename(todo, done);
        await arrived((event) => event.type === 'file.created' && event.path === 'notes/done.md');
        await vscode.workspace.fs.delete(done);
        await arrived((event) => event.type === 'file.deleted' && event.path === 'notes/done.md');
        const files = seen.filter((event) => event.type.startsWith('file.')).map((event) => `${event.type} ${String(event.path)}`);
        // Each once; a rename is reported as the new file and the old one gone, in either order.
        assert.deepEqual(
          [files[0], files.slice(1, 3).sort(), files.slice(3)],
          ['file.created notes/todo.md', ['file.created notes/done.md', 'file.deleted notes/todo.md'], ['file.deleted notes/done.md']],
        );
      } finally {
        subscription.dispose();
      }
    });
  });
}
