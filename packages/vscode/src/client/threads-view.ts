import * as vscode from 'vscode';
import { FolderTreeView } from './folder-tree-view';
import { timeAgo } from './relative-time';
import { type FolderWorkspace, ListThreads, type ThreadListItem } from '../common/protocol';

type Node = { kind: 'workspace'; workspace: FolderWorkspace } | { kind: 'thread'; thread: ThreadListItem };

/**
 * The Threads view: the threads of each open folder, newest first. It refreshes when the core
 * publishes a thread event (never by polling); with one folder open the threads are the top level.
 */
export class ThreadsView extends FolderTreeView<Node> {

  async getChildren(node?: Node): Promise<Node[]> {
    if (!node) {
      if (this.workspaces.length === 1) return this.threadsOf(this.workspaces[0]!);
      return this.workspaces.map((workspace) => ({ kind: 'workspace', workspace }));
    }
    return node.kind === 'workspace' ? this.threadsOf(node.workspace) : [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === 'workspace') {
      const item = new vscode.TreeItem(node.workspace.name, vscode.TreeItemCollapsibleState.Expanded);
      item.iconPath = new vscode.ThemeIcon('root-folder');
      item.contextValue = 'runloom.workspace';
      return item;
    }
    const { thread } = node;
    const item = new vscode.TreeItem(thread.title, vscode.TreeItemCollapsibleState.None);
    item.id = `${thread.workspaceId}/${thread.threadId}`;
    item.description = thread.streaming ? 'replying…' : timeAgo(new Date(thread.updatedAt), new Date(), vscode.env.language);
    item.tooltip = `${thread.title}\nlast changed ${new Date(thread.updatedAt).toLocaleString(vscode.env.language)}`;
    item.iconPath = new vscode.ThemeIcon(thread.streaming ? 'sync~spin' : 'comment-discussion');
    item.contextValue = 'runloom.thread';
    item.command = { command: 'runloom.openThread', title: 'Open Thread', arguments: [thread.workspaceId, thread.threadId] };
    return item;
  }

  private async threadsOf(workspace: FolderWorkspace): Promise<Node[]> {
    const threads = await this.client.sendRequest(ListThreads.type, { workspaceId: workspace.workspaceId });
    return threads.map((thread) => ({ kind: 'thread', thread }));
  }
}

/** The thread a context-menu command was invoked on. */
export function threadOf(node: unknown): ThreadListItem | undefined {
  const candidate = node as Node | undefined;
  return candidate?.kind === 'thread' ? candidate.thread : undefined;
}
