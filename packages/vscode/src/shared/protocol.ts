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

/** Sent once the embedded core has opened the folders' workspaces (or failed to). */
export namespace ServerReady {
  export const type = new NotificationType<{ workspaces: FolderWorkspace[]; error?: string }>('runloom/ready');
}

/** What the client tells the server when it starts it. */
export interface InitializationOptions {
  /** Folder for the embedded store (the extension's global storage). */
  storagePath: string;
}
