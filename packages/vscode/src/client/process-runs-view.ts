import * as vscode from 'vscode';
import { FolderTreeView } from './folder-tree-view';
import { ActOnProcessRun, ListProcessRuns, type ProcessRunAction, type ProcessRunItem, type ProcessTaskAction, type ProcessTaskItem } from '../common/protocol';

type Phase = ProcessRunItem['phases'][number];
type Node = { kind: 'run'; run: ProcessRunItem } | { kind: 'phase'; run: ProcessRunItem; phase: Phase } | { kind: 'task'; run: ProcessRunItem; phase: Phase; task: ProcessTaskItem };

/** A state's icon: the editor's own codicons, coloured like its test results. */
const STATE_ICONS: Record<string, [string, string?]> = {
  created: ['circle-outline'],
  pending: ['circle-outline'],
  running: ['sync~spin', 'charts.blue'],
  paused: ['debug-pause', 'charts.yellow'],
  waiting_approval: ['question', 'charts.yellow'],
  succeeded: ['pass', 'testing.iconPassed'],
  failed: ['error', 'testing.iconFailed'],
  cancelled: ['circle-slash', 'disabledForeground'],
  skipped: ['debug-step-over', 'disabledForeground'],
};

/**
 * The Process Runs view: runs → phases → tasks with their states, refreshed by the run and task
 * events the server forwards. Each node's `contextValue` names its state, so its context menu
 * offers only the actions that state allows (the core refuses the others with 409 anyway).
 */
export class ProcessRunsView extends FolderTreeView<Node> {

  async runs(): Promise<ProcessRunItem[]> {
    const lists = await Promise.all(this.workspaces.map((workspace) => this.client.sendRequest(ListProcessRuns.type, { workspaceId: workspace.workspaceId })));
    return lists.flat().sort((left, right) => right.createdAt.localeCompare(left.createdAt));
  }

  async getChildren(node?: Node): Promise<Node[]> {
    if (!node) return (await this.runs()).map((run) => ({ kind: 'run', run }));
    if (node.kind === 'run') return node.run.phases.map((phase) => ({ kind: 'phase', run: node.run, phase }));
    if (node.kind === 'phase') return node.phase.tasks.map((task) => ({ kind: 'task', run: node.run, phase: node.phase, task }));
    return [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    const [label, status, collapsible, id] =
      node.kind === 'run'
        ? [node.run.name, node.run.status, vscode.TreeItemCollapsibleState.Expanded, node.run.runId]
        : node.kind === 'phase'
          ? [node.phase.name, node.phase.status, vscode.TreeItemCollapsibleState.Expanded, `${node.run.runId}/${node.phase.id}`]
          : [node.task.name, node.task.status, vscode.TreeItemCollapsibleState.None, `${node.run.runId}/${node.phase.id}/${node.task.id}`];
    const item = new vscode.TreeItem(label, collapsible);
    item.id = id;
    const [icon, color] = STATE_ICONS[status] ?? ['circle-outline'];
    item.iconPath = new vscode.ThemeIcon(icon, color ? new vscode.ThemeColor(color) : undefined);
    item.description = status.replace('_', ' ') + (node.kind === 'task' && node.task.attempts > 1 ? ` · ${node.task.attempts} attempts` : '');
    item.tooltip = node.kind === 'task' && node.task.error ? node.task.error : undefined;
    item.contextValue = `runloom.${node.kind}.${status}`;
    return item;
  }

  /** Applies a run action (to the node's run) or a task action (to the node's task). */
  async act(node: unknown, action: ProcessRunAction | ProcessTaskAction): Promise<string | undefined> {
    const target = node as Node | undefined;
    if (!target) return undefined;
    const onTask = target.kind === 'task' ? { phaseId: target.phase.id, taskId: target.task.id } : {};
    const { message } = await this.client.sendRequest(ActOnProcessRun.type, { workspaceId: target.run.workspaceId, runId: target.run.runId, action, ...onTask });
    this.refresh();
    return message;
  }
}
