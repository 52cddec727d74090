import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import nodePath from 'node:path';
import { type Command, DomainError, type ProcessRunView, PROVIDER_NAMES, type ThreadMetadata, type UIMessage } from '@runloom/core';
import { isWorkspaceTempName } from '@runloom/core/node';
import type { ChatMessage, CommandItem, ProcessRunItem, ThreadListItem } from '../common/protocol';
import { EDITOR_ACCOUNT, type EmbeddedRunloom, holdCredentials } from './embedded-runloom';
import { type ExecutionUpdate, FINISHED_EXECUTION, type FolderFileChange, type ReplyChunkBatch, type RunloomBackend, type WorkspaceEventHandler } from './runloom-backend';

/** Listed per view refresh: far more than a side panel shows. */
const PAGE = { limit: 500, offset: 0 };
const SHELL_OFF = 'shell commands are off in this editor: turn on the setting runloom.commands.allowShell (it applies in a trusted workspace only)';
/** Entries of a new folder looked at for files a watcher did not report one by one. */
const NEW_FOLDER_ENTRIES = 1_000;

/** A directory reported created, one known only as the parent of a reported path, a file, or gone. */
type Reported = { size: number; mtimeMs: number } | 'directory' | 'parent' | 'deleted';

/**
 * The requests answered by the core embedded in the language server (`embedded-runloom.ts`): one
 * workspace per open folder, the editor's person as the one account.
 */
export class EmbeddedBackend implements RunloomBackend {
  /**
   * What was last reported of each path the watcher named, per workspace (a deletion can no longer
   * be looked at, and a state is reported once).
   */
  private readonly reported = new Map<string, Map<string, Reported>>();

  constructor(private readonly embedded: EmbeddedRunloom) {}

  get workspaces(): EmbeddedRunloom['workspaces'] {
    return this.embedded.workspaces;
  }

  private get runloom(): EmbeddedRunloom['runloom'] {
    return this.embedded.runloom;
  }

  async listThreads(workspaceId: string): Promise<ThreadListItem[]> {
    const listed = await this.runloom.threads.list(EDITOR_ACCOUNT, workspaceId, PAGE);
    const items = await Promise.all(listed.map(async (thread) => toListItem(thread, Boolean(await this.runloom.threadStreams.active(EDITOR_ACCOUNT, workspaceId, thread.id)))));
    return items.sort((left, right) => right.updatedAt.localeCompare(left.updatedAt));
  }

  async createThread(workspaceId: string, title: string): Promise<ThreadListItem> {
    const { thread } = await this.runloom.threads.save(EDITOR_ACCOUNT, workspaceId, newThreadId(), { title, messages: [] });
    return { workspaceId, threadId: thread.id, title: thread.title ?? title, updatedAt: thread.updated_at, streaming: false };
  }

  async deleteThread(workspaceId: string, threadId: string): Promise<void> {
    await this.runloom.threadStreams.cancel(EDITOR_ACCOUNT, workspaceId, threadId);
    await this.runloom.threads.delete(EDITOR_ACCOUNT, workspaceId, threadId);
  }

  async threadMessages(workspaceId: string, threadId: string): Promise<{ title: string; messages: ChatMessage[] }> {
    const thread = await this.runloom.threads.get(EDITOR_ACCOUNT, workspaceId, threadId);
    return { title: thread.title ?? threadId, messages: thread.messages.map(toChatMessage) };
  }

  async sendMessage(workspaceId: string, threadId: string, text: string, model: { provider: string; model: string } | undefined) {
    const userMessageId = randomUUID();
    const message = { id: userMessageId, role: 'user' as const, parts: [{ type: 'text' as const, text }] };
    const stream = await this.runloom.threadStreams.reply(EDITOR_ACCOUNT, workspaceId, { threadId, message, model: model as never });
    return { streamId: stream.id, userMessageId, reply: readStream(stream) };
  }

  stopReply(workspaceId: string, threadId: string): Promise<boolean> {
    return this.runloom.threadStreams.cancel(EDITOR_ACCOUNT, workspaceId, threadId);
  }

  providers(): string[] {
    return [...PROVIDER_NAMES];
  }

  async setProviderCredentials(provider: string, credentials: Record<string, string> | null): Promise<void> {
    holdCredentials(this.embedded.credentials, provider, credentials);
  }

  async listCommands(workspaceId: string): Promise<CommandItem[]> {
    return (await this.runloom.commands.list(EDITOR_ACCOUNT, workspaceId, { ...PAGE })).map((command) => toCommandItem(workspaceId, command));
  }

  async executeCommand(workspaceId: string, trigger: string, args: string[]): Promise<{ runId: string; updates: AsyncIterable<ExecutionUpdate> }> {
    const { runId } = await this.runloom.commandExecutions.execute(EDITOR_ACCOUNT, workspaceId, trigger, { args }).catch((error: unknown) => {
      // The core names the server's flag; in the editor the setting and Workspace Trust decide.
      if (!this.embedded.shell.enabled && error instanceof DomainError && error.code === 'FORBIDDEN') throw DomainError.forbidden(SHELL_OFF);
      throw error;
    });
    const events = await this.runloom.commandExecutions.follow(EDITOR_ACCOUNT, workspaceId, trigger, runId);
    return {
      runId,
      updates: (async function* () {
        for await (const event of events) {
          if (event.type === 'output') yield { type: 'output', text: event.text } as const;
          else if (FINISHED_EXECUTION.has(event.execution.status)) {
            yield { type: 'end', status: event.execution.status, error: event.execution.error?.message } as const;
            return;
          }
        }
      })(),
    };
  }

  async cancelExecution(workspaceId: string, trigger: string, runId: string): Promise<string> {
    return (await this.runloom.commandExecutions.cancel(EDITOR_ACCOUNT, workspaceId, trigger, runId)).status;
  }

  async listProcessRuns(workspaceId: string): Promise<ProcessRunItem[]> {
    return (await this.runloom.processes.list(EDITOR_ACCOUNT, workspaceId, undefined, PAGE)).map(toProcessRunItem);
  }

  async startProcessRun(workspaceId: string, processId: string, spec: unknown): Promise<ProcessRunItem> {
    const created = await this.runloom.processes.create(EDITOR_ACCOUNT, workspaceId, processId, { spec: spec as never });
    return toProcessRunItem((await this.runloom.processes.act(EDITOR_ACCOUNT, workspaceId, created.id, 'start')).data);
  }

  async actOnProcessRun(workspaceId: string, runId: string, action: string, task?: { phaseId: string; taskId: string }): Promise<{ message: string; run: ProcessRunItem }> {
    const { processes } = this.runloom;
    const done = await (() => {
      switch (action) {
        case 'retry':
        case 'skip':
          if (!task) throw new Error(`${action} needs the task's phase and id`);
          return action === 'retry' ? processes.retryTask(EDITOR_ACCOUNT, workspaceId, runId, task.phaseId, task.taskId) : processes.skipTask(EDITOR_ACCOUNT, workspaceId, runId, task.phaseId, task.taskId);
        case 'approve':
        case 'reject':
          return processes.approve(EDITOR_ACCOUNT, workspaceId, runId, { ...task, decision: action });
        default:
          return processes.act(EDITOR_ACCOUNT, workspaceId, runId, action as 'start' | 'pause' | 'resume' | 'cancel');
      }
    })();
    return { message: done.message, run: toProcessRunItem(done.data) };
  }

  subscribe(workspaceId: string, handler: WorkspaceEventHandler): { unsubscribe(): void } {
    return this.runloom.workspaceEvents.subscribe(workspaceId, (published) => handler({ id: published.id, event: published.event }));
  }

  setShellCommands(enabled: boolean): void {
    this.embedded.shell.enabled = enabled;
  }

  /**
   * Publishes what changed in the open folders outside the core (saved in the editor, written by
   * git or a tool) on the workspaces' event streams, as the core's own file events read
   * (docs/api.md, workspace events). The core's own writes, the temporary files of its writes and
   * `.git/` are left out, and each state of a path is reported once.
   */
  async filesChanged(changes: FolderFileChange[]): Promise<void> {
    for (const change of changes) await this.folderChange(change.path, change.kind, { entries: NEW_FOLDER_ENTRIES });
  }

  private async folderChange(absolute: string, kind: FolderFileChange['kind'], budget: { entries: number }): Promise<void> {
    const located = this.locate(absolute);
    if (!located) return;
    const { workspaceId, path } = located;
    const stats = await fs.stat(absolute).catch(() => undefined);
    const seen = stats && { size: stats.isDirectory() ? 0 : stats.size, mtimeMs: stats.mtime.getTime() };
    if (await this.embedded.coreWrites.madeByCore(workspaceId, path, async () => seen)) return;
    const known = this.reportedOf(workspaceId);
    for (let parent = nodePath.posix.dirname(path); parent !== '.'; parent = nodePath.posix.dirname(parent)) {
      if (known.get(parent) !== 'directory') known.set(parent, 'parent');
    }
    const before = known.get(path);
    const publish = (event: { type: string; [field: string]: unknown }) => this.runloom.workspaceEvents.publish(workspaceId, event);
    if (!stats || !seen) {
      // Reported gone (deleted, or renamed away: the watcher reports a rename as delete + create).
      if (kind !== 'deleted' || before === 'deleted') return;
      known.set(path, 'deleted');
      await publish({ type: before === 'directory' || before === 'parent' ? 'directory.deleted' : 'file.deleted', path });
    } else if (stats.isDirectory()) {
      if (before === 'directory') return;
      known.set(path, 'directory');
      await publish({ type: 'directory.created', path });
      // A watcher may report a new folder without the files that came with it (git, an unzip): look inside.
      if (nodePath.basename(absolute) === 'node_modules') return;
      const entries = await fs.readdir(absolute).catch(() => []);
      for (const name of entries.slice(0, Math.max(0, budget.entries))) {
        budget.entries -= 1;
        await this.folderChange(nodePath.join(absolute, name), 'created', budget);
      }
    } else if (stats.isFile()) {
      if (typeof before === 'object' && before.size === seen.size && before.mtimeMs === seen.mtimeMs) return;
      known.set(path, seen);
      const type = typeof before === 'object' ? 'file.updated' : before === 'deleted' || kind === 'created' ? 'file.created' : 'file.updated';
      await publish({ type, path, size: stats.size });
    }
  }

  close(): Promise<void> {
    return this.runloom.close();
  }

  /** The workspace whose folder holds `absolute`, and the path in it; none for a path to leave out. */
  private locate(absolute: string): { workspaceId: string; path: string } | undefined {
    for (const workspace of this.workspaces) {
      const relative = nodePath.relative(workspace.folder, absolute);
      if (!relative || relative.startsWith('..') || nodePath.isAbsolute(relative)) continue;
      const segments = relative.split(nodePath.sep);
      if (segments[0] === '.git' || isWorkspaceTempName(segments.at(-1)!)) return undefined;
      return { workspaceId: workspace.workspaceId, path: segments.join('/') };
    }
    return undefined;
  }

  private reportedOf(workspaceId: string): Map<string, Reported> {
    let known = this.reported.get(workspaceId);
    if (!known) this.reported.set(workspaceId, (known = new Map()));
    return known;
  }
}

/** The stream's chunks as they come, batched per read, until it ends. */
async function* readStream(stream: { read(after: number): Promise<{ first: number; chunks: readonly string[]; ended: boolean }>; subscribe(): () => void }): AsyncIterable<ReplyChunkBatch> {
  const leave = stream.subscribe();
  try {
    for (let after = 0; ; ) {
      const read = await stream.read(after);
      after = read.first - 1 + read.chunks.length;
      yield { chunks: read.chunks.map((chunk) => JSON.parse(chunk) as Record<string, unknown>), ended: read.ended };
      if (read.ended) return;
    }
  } finally {
    leave();
  }
}

/** A new thread's id: sortable by creation, unlikely to meet another's. */
export function newThreadId(): string {
  return `thread-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

function toListItem(thread: ThreadMetadata, streaming: boolean): ThreadListItem {
  return { workspaceId: thread.workspace_id, threadId: thread.id, title: thread.title ?? thread.id, updatedAt: thread.updated_at, streaming };
}

/** A UIMessage as the chat panel shows it: its text parts, and its status when it did not complete. */
export function toChatMessage(message: UIMessage): ChatMessage {
  const text = message.parts
    .filter((part): part is { type: 'text'; text: string } => part.type === 'text' && typeof (part as { text?: unknown }).text === 'string')
    .map((part) => part.text)
    .join('');
  const { status, model } = (message.metadata ?? {}) as { status?: string; model?: { provider?: string; model?: string } };
  return {
    id: message.id,
    role: message.role,
    text,
    ...(status && status !== 'complete' ? { status } : {}),
    ...(model?.provider && model.model ? { model: `${model.provider}/${model.model}` } : {}),
  };
}

export function toCommandItem(workspaceId: string, command: Pick<Command, 'trigger' | 'name' | 'description' | 'category' | 'type' | 'args'>): CommandItem {
  return {
    workspaceId,
    trigger: command.trigger,
    name: command.name,
    description: command.description,
    category: command.category,
    type: command.type,
    args: command.args.map((arg) => ({ name: arg.name, description: arg.description, required: arg.required })),
  };
}

export function toProcessRunItem(run: ProcessRunView): ProcessRunItem {
  return {
    workspaceId: run.workspace_id,
    runId: run.id,
    processId: run.process_id,
    name: run.spec.name,
    status: run.status,
    createdAt: run.created_at,
    phases: run.phases.map((phase) => ({
      id: phase.id,
      name: phase.name,
      status: phase.status,
      tasks: phase.tasks.map((task) => ({ id: task.id, name: task.name, type: task.type, status: task.status, attempts: task.attempts, error: task.error?.message ?? null })),
    })),
  };
}
