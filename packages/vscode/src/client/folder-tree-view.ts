import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import type { FolderWorkspace } from '../common/protocol';

/**
 * What the Runloom views have in common: they show the open folders' workspaces, asked of the
 * language server, and redraw when told (by the core's events, never by polling).
 */
export abstract class FolderTreeView<Node> implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  protected workspaces: FolderWorkspace[] = [];

  constructor(protected readonly client: LanguageClient) {}

  /** The open folders' workspaces, once the server has started the core. */
  setWorkspaces(workspaces: FolderWorkspace[]): void {
    this.workspaces = workspaces;
    this.refresh();
  }

  refresh(): void {
    this.changed.fire(undefined);
  }

  dispose(): void {
    this.changed.dispose();
  }

  abstract getChildren(node?: Node): Promise<Node[]>;
  abstract getTreeItem(node: Node): vscode.TreeItem;
}
