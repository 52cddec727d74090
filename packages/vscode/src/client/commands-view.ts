import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { FolderTreeView } from './folder-tree-view';
import { CancelExecution, type CommandItem, CommandOutput, ExecuteCommand, type FolderWorkspace, ListCommands } from '../common/protocol';

type Node = { kind: 'category'; workspace: FolderWorkspace; category: string; commands: CommandItem[] } | { kind: 'command'; command: CommandItem };

/**
 * The Commands view: the folder's commands (`.runloom/commands/*.yaml`) by category. Running one
 * asks for its declared args, then its output streams into the "Runloom Commands" output channel.
 */
export class CommandsView extends FolderTreeView<Node> {
  private readonly output = vscode.window.createOutputChannel('Runloom Commands');
  /**
   * Executions by run id: their output so far and, once finished, their status. An entry may be
   * made by the first notification, which can arrive before the execute request's answer.
   */
  private readonly executions = new Map<string, { trigger: string; workspaceId: string; text: string; status?: string }>();
  private readonly endWaiters = new Map<string, ((end: { status: string; text: string }) => void)[]>();
  private readonly subscription: vscode.Disposable;

  constructor(client: LanguageClient) {
    super(client);
    this.subscription = client.onNotification(CommandOutput.type, ({ workspaceId, trigger, runId, text, status, error }) => {
      const execution = this.executionOf(runId, trigger, workspaceId);
      if (text !== undefined) {
        execution.text += text;
        this.output.append(text);
      }
      if (status === undefined) return;
      execution.status = status;
      this.showRunning();
      const lineEnd = execution.text === '' || execution.text.endsWith('\n') ? '' : '\n';
      this.output.appendLine(`${lineEnd}── ${trigger} ${status}${error ? `: ${error}` : ''}`);
      for (const resolve of this.endWaiters.get(runId) ?? []) resolve({ status, text: execution.text });
      this.endWaiters.delete(runId);
    });
  }

  private executionOf(runId: string, trigger: string, workspaceId: string): { trigger: string; workspaceId: string; text: string; status?: string } {
    let execution = this.executions.get(runId);
    if (!execution) {
      execution = { trigger, workspaceId, text: '' };
      this.executions.set(runId, execution);
    }
    return execution;
  }

  async getChildren(node?: Node): Promise<Node[]> {
    if (node?.kind === 'category') return node.commands.map((command) => ({ kind: 'command', command }));
    if (node) return [];
    const categories: Node[] = [];
    for (const workspace of this.workspaces) {
      const commands = await this.client.sendRequest(ListCommands.type, { workspaceId: workspace.workspaceId });
      const byCategory = new Map<string, CommandItem[]>();
      for (const command of commands) byCategory.set(command.category, [...(byCategory.get(command.category) ?? []), command]);
      for (const [category, inCategory] of [...byCategory].sort(([left], [right]) => left.localeCompare(right))) {
        categories.push({ kind: 'category', workspace, category, commands: inCategory.sort((left, right) => left.trigger.localeCompare(right.trigger)) });
      }
    }
    return categories;
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === 'category') {
      const item = new vscode.TreeItem(node.category, vscode.TreeItemCollapsibleState.Expanded);
      item.iconPath = new vscode.ThemeIcon('folder');
      item.description = this.workspaces.length > 1 ? node.workspace.name : undefined;
      return item;
    }
    const { command } = node;
    const item = new vscode.TreeItem(command.trigger, vscode.TreeItemCollapsibleState.None);
    item.id = `${command.workspaceId}/${command.trigger}`;
    item.description = command.name === command.trigger ? command.type : `${command.name} · ${command.type}`;
    item.tooltip = command.description ?? undefined;
    item.iconPath = new vscode.ThemeIcon(command.type === 'shell' ? 'terminal' : command.type === 'process' ? 'list-tree' : 'sparkle');
    item.contextValue = 'runloom.command';
    return item;
  }

  /** Runs the command with `args`, or asks for each declared arg; answers the execution's run id. */
  async run(node: unknown, args?: string[]): Promise<string | undefined> {
    const command = (node as Node | undefined)?.kind === 'command' ? (node as { command: CommandItem }).command : undefined;
    if (!command) return undefined;
    let values = args;
    if (!values) {
      values = [];
      for (const arg of command.args) {
        const value = await vscode.window.showInputBox({ prompt: `${command.trigger}: ${arg.name}${arg.description ? ` (${arg.description})` : ''}`, ignoreFocusOut: true });
        if (value === undefined) return undefined;
        if (value === '' && !arg.required) break;
        values.push(value);
      }
    }
    this.output.show(true);
    this.output.appendLine(`── ${command.trigger} ${values.join(' ')}`.trimEnd());
    const { runId } = await this.client.sendRequest(ExecuteCommand.type, { workspaceId: command.workspaceId, trigger: command.trigger, args: values }).catch((error: unknown) => {
      // Refused before it ran (a missing arg, shell commands off): the channel says why too.
      const message = error instanceof Error ? error.message : String(error);
      this.output.appendLine(`── ${command.trigger} refused: ${message.replace(/^Request \S+ failed with message: /, '')}`);
      throw error;
    });
    this.executionOf(runId, command.trigger, command.workspaceId);
    this.showRunning();
    return runId;
  }

  /** The view's cancel button shows while an execution runs (`runloom.commandRunning` in its `when`). */
  private showRunning(): void {
    const running = [...this.executions.values()].some((execution) => execution.status === undefined);
    void vscode.commands.executeCommand('setContext', 'runloom.commandRunning', running);
  }

  /** Cancels a running execution (the last one started when several run and none is named). */
  async cancel(runId?: string): Promise<void> {
    const running = [...this.executions].filter(([, execution]) => execution.status === undefined);
    const [id, execution] = (runId ? running.find(([candidate]) => candidate === runId) : running.pop()) ?? [];
    if (!id || !execution) return;
    await this.client.sendRequest(CancelExecution.type, { workspaceId: execution.workspaceId, trigger: execution.trigger, runId: id });
  }

  /** Resolves with the execution's status and whole output once it has finished. */
  ended(runId: string): Promise<{ status: string; text: string }> {
    const execution = this.executions.get(runId);
    if (execution?.status !== undefined) return Promise.resolve({ status: execution.status, text: execution.text });
    return new Promise((resolve) => this.endWaiters.set(runId, [...(this.endWaiters.get(runId) ?? []), resolve]));
  }

  override dispose(): void {
    this.subscription.dispose();
    this.output.dispose();
    super.dispose();
  }
}
