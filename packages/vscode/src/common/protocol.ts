import { NotificationType, RequestType, RequestType0 } from 'vscode-languageserver-protocol';

/**
 * The messages between the extension (client) and the Runloom language server, declared once and
 * imported by both sides (the vscode-eslint layout). Requests go client → server unless noted;
 * notifications server → client carry what the core publishes, so nothing polls.
 */

/** One open folder as a Runloom workspace. */
export interface FolderWorkspace {
  folder: string;
  workspaceId: string;
  name: string;
}

/** A thread as the tree lists it. */
export interface ThreadListItem {
  workspaceId: string;
  threadId: string;
  title: string;
  updatedAt: string;
  streaming: boolean;
}

/** A message of a thread, reduced to what the chat panel renders. */
export interface ChatMessage {
  id: string;
  role: 'user' | 'assistant' | 'system';
  text: string;
  /** `streaming`, `cancelled`, `interrupted`, `error` for replies that did not finish normally. */
  status?: string;
  /** The model a reply came from, as `provider/model`. */
  model?: string;
}

export interface ModelChoice {
  provider: string;
  model: string;
}

export namespace ListWorkspaces {
  export const type = new RequestType0<FolderWorkspace[], void>('runloom/listWorkspaces');
}

export namespace ListThreads {
  export const type = new RequestType<{ workspaceId: string }, ThreadListItem[], void>('runloom/listThreads');
}

export namespace CreateThread {
  export const type = new RequestType<{ workspaceId: string; title: string }, ThreadListItem, void>('runloom/createThread');
}

export namespace DeleteThread {
  export const type = new RequestType<{ workspaceId: string; threadId: string }, void, void>('runloom/deleteThread');
}

export namespace GetThreadMessages {
  export const type = new RequestType<{ workspaceId: string; threadId: string }, { title: string; messages: ChatMessage[] }, void>('runloom/getThreadMessages');
}

/**
 * Appends the user's message and starts the reply; its chunks follow as `ReplyChunks`
 * notifications. The model: `model`, else the workspace configuration's `models.default`.
 */
export namespace SendMessage {
  export const type = new RequestType<{ workspaceId: string; threadId: string; text: string; model?: ModelChoice }, { streamId: string; userMessageId: string }, void>('runloom/sendMessage');
}

/** Stops the thread's reply; the partial reply is kept, marked cancelled. */
export namespace StopReply {
  export const type = new RequestType<{ workspaceId: string; threadId: string }, { stopped: boolean }, void>('runloom/stopReply');
}

/** The chunks of a reply, in order (AI SDK UI message stream chunks, as the HTTP route sends them). */
export namespace ReplyChunks {
  export const type = new NotificationType<{ workspaceId: string; threadId: string; streamId: string; chunks: Record<string, unknown>[]; ended: boolean }>('runloom/replyChunks');
}

/** The model providers the core speaks to, in the order the API lists them. */
export namespace ListProviders {
  export const type = new RequestType0<string[], void>('runloom/listProviders');
}

/** The credentials of a model provider, from the editor's SecretStorage, held in memory only; null forgets them. */
export namespace SetProviderCredentials {
  export const type = new RequestType<{ provider: string; credentials: Record<string, string> | null }, void, void>('runloom/setProviderCredentials');
}

/** Every event of a workspace's stream (files, threads, commands, process runs), as it is published. */
export namespace WorkspaceEventNotification {
  export const type = new NotificationType<{ workspaceId: string; id: number; event: { type: string; [field: string]: unknown } }>('runloom/workspaceEvent');
}

/** Sent once the backend has started: the embedded core with the folders' workspaces, or a remote server's (or it failed to). */
export namespace ServerReady {
  export const type = new NotificationType<{ workspaces: FolderWorkspace[]; error?: string }>('runloom/ready');
}

/**
 * Client → server: whether shell commands may run — the `runloom.commands.allowShell` setting, and
 * only in a trusted workspace; sent when trust is granted or the setting changes.
 */
export namespace SetShellCommands {
  export const type = new NotificationType<{ enabled: boolean }>('runloom/setShellCommands');
}

/** A workspace command as the Commands view lists it. */
export interface CommandItem {
  workspaceId: string;
  trigger: string;
  name: string;
  description: string | null;
  category: string;
  type: string;
  args: { name: string; description?: string | null; required: boolean }[];
}

export namespace ListCommands {
  export const type = new RequestType<{ workspaceId: string }, CommandItem[], void>('runloom/listCommands');
}

/** Runs a command; its output and status follow as `CommandOutput` notifications. */
export namespace ExecuteCommand {
  export const type = new RequestType<{ workspaceId: string; trigger: string; args: string[] }, { runId: string }, void>('runloom/executeCommand');
}

export namespace CancelExecution {
  export const type = new RequestType<{ workspaceId: string; trigger: string; runId: string }, { status: string }, void>('runloom/cancelExecution');
}

/** Output of an execution as it is written, then its end (`status` set once it has finished). */
export namespace CommandOutput {
  export const type = new NotificationType<{ workspaceId: string; trigger: string; runId: string; text?: string; status?: string; error?: string }>('runloom/commandOutput');
}

export interface ProcessTaskItem {
  id: string;
  name: string;
  type: string;
  status: string;
  attempts: number;
  error: string | null;
}

export interface ProcessRunItem {
  workspaceId: string;
  runId: string;
  processId: string;
  name: string;
  status: string;
  createdAt: string;
  phases: { id: string; name: string; status: string; tasks: ProcessTaskItem[] }[];
}

export namespace ListProcessRuns {
  export const type = new RequestType<{ workspaceId: string }, ProcessRunItem[], void>('runloom/listProcessRuns');
}

/** Creates a run of a process specification (the YAML text of a `*.process.yaml` file) and starts it. */
export namespace StartProcessRun {
  export const type = new RequestType<{ workspaceId: string; processId: string; specYaml: string }, ProcessRunItem, void>('runloom/startProcessRun');
}

export type ProcessRunAction = 'start' | 'pause' | 'resume' | 'cancel' | 'approve' | 'reject';
export type ProcessTaskAction = 'retry' | 'skip';

/** A run action, or with `phaseId` + `taskId` a task action (approve and reject decide that task's approval). */
export namespace ActOnProcessRun {
  export const type = new RequestType<
    { workspaceId: string; runId: string; action: ProcessRunAction | ProcessTaskAction; phaseId?: string; taskId?: string },
    { message: string; run: ProcessRunItem },
    void
  >('runloom/actOnProcessRun');
}

/** A remote `runloom serve` and the client credentials its `POST /auth/token` takes. */
export interface RemoteServer {
  url: string;
  clientId: string;
  clientSecret: string;
}

/** What the client tells the server when it starts it. */
export interface InitializationOptions {
  /** Folder for the embedded store (the extension's global storage). */
  storagePath: string;
  /** Whether shell commands may run now (see `SetShellCommands`). */
  shellCommands: boolean;
  /** Set: talk to this server instead of starting the embedded core. */
  remote?: RemoteServer;
}
