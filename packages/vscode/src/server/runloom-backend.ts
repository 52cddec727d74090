import type { ChatMessage, CommandItem, FolderWorkspace, ModelChoice, ProcessRunAction, ProcessRunItem, ProcessTaskAction, ThreadListItem } from '../common/protocol';

/** A batch of a reply's UI message stream chunks, in order; `ended` on the last. */
export interface ReplyChunkBatch {
  chunks: Record<string, unknown>[];
  ended: boolean;
}

/** The statuses a command execution ends in. */
export const FINISHED_EXECUTION: ReadonlySet<string> = new Set(['succeeded', 'failed', 'cancelled']);

/** What an execution reports until it has finished: output as written, then its final status. */
export type ExecutionUpdate = { type: 'output'; text: string } | { type: 'end'; status: string; error?: string };

export interface WorkspaceEventHandler {
  (published: { id: number; event: { type: string; [field: string]: unknown } }): void;
}

/** A file change the editor saw in an open folder (the LSP's watched-file events). */
export interface FolderFileChange {
  /** Absolute path on this machine. */
  path: string;
  kind: 'created' | 'changed' | 'deleted';
}

/**
 * Where the language server's custom requests go (ARCHITECTURE.md, "VS Code"): the core embedded in
 * this process (`embedded-backend.ts`) or a remote `runloom serve` over its HTTP API
 * (`remote-backend.ts`). The request handlers and the views see only this, so neither cares which.
 */
export interface RunloomBackend {
  /** The workspaces the views show: one per open folder, or the remote account's. */
  readonly workspaces: FolderWorkspace[];
  listThreads(workspaceId: string): Promise<ThreadListItem[]>;
  createThread(workspaceId: string, title: string): Promise<ThreadListItem>;
  deleteThread(workspaceId: string, threadId: string): Promise<void>;
  threadMessages(workspaceId: string, threadId: string): Promise<{ title: string; messages: ChatMessage[] }>;
  /** Appends the user's message and starts the reply, whose chunks `reply` yields as they come. */
  sendMessage(
    workspaceId: string,
    threadId: string,
    text: string,
    model: ModelChoice | undefined,
  ): Promise<{ streamId: string; userMessageId: string; reply: AsyncIterable<ReplyChunkBatch> }>;
  /** Stops the reply (the partial reply is kept, marked cancelled); false when none was streaming. */
  stopReply(workspaceId: string, threadId: string): Promise<boolean>;
  /** The model providers that can be configured, in the API's order. */
  providers(): string[];
  /** The editor's provider credentials, held in memory (embedded); a remote server keeps its own. */
  setProviderCredentials(provider: string, credentials: Record<string, string> | null): Promise<void>;
  listCommands(workspaceId: string): Promise<CommandItem[]>;
  executeCommand(workspaceId: string, trigger: string, args: string[]): Promise<{ runId: string; updates: AsyncIterable<ExecutionUpdate> }>;
  cancelExecution(workspaceId: string, trigger: string, runId: string): Promise<string>;
  listProcessRuns(workspaceId: string): Promise<ProcessRunItem[]>;
  /** Creates a run of the specification and starts it. */
  startProcessRun(workspaceId: string, processId: string, spec: unknown): Promise<ProcessRunItem>;
  actOnProcessRun(
    workspaceId: string,
    runId: string,
    action: ProcessRunAction | ProcessTaskAction,
    task?: { phaseId: string; taskId: string },
  ): Promise<{ message: string; run: ProcessRunItem }>;
  /** Every event of the workspace's stream from now on, until `unsubscribe`. */
  subscribe(workspaceId: string, handler: WorkspaceEventHandler): { unsubscribe(): void };
  /** Whether shell commands may run (the editor's setting in a trusted workspace); a remote server's operator decides for it. */
  setShellCommands(enabled: boolean): void;
  /** Files changed in the open folders outside the core (the editor, git): published as workspace events. */
  filesChanged(changes: FolderFileChange[]): Promise<void>;
  close(): Promise<void>;
}
