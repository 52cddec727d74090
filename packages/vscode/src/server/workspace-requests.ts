import { randomUUID } from 'node:crypto';
import type { Connection } from 'vscode-languageserver/node';
import { PROVIDER_NAMES, type Thread, type ThreadMetadata, type UIMessage } from '@runloom/core';
import {
  type ChatMessage,
  CreateThread,
  DeleteThread,
  GetThreadMessages,
  ListProviders,
  ListThreads,
  ListWorkspaces,
  ReplyChunks,
  SendMessage,
  SetProviderCredentials,
  StopReply,
  type ThreadListItem,
  WorkspaceEventNotification,
} from '../common/protocol';
import { EDITOR_ACCOUNT, type EmbeddedRunloom, holdCredentials } from './embedded-runloom';

/** Threads listed per tree refresh: far more than a side panel shows. */
const THREAD_PAGE = { limit: 500, offset: 0 };

/**
 * Answers the extension's requests with the embedded core's services, and forwards what the core
 * publishes (workspace events, reply chunks) as notifications. `embedded` resolves once the core
 * has started; requests made before wait for it.
 */
export function serveWorkspaceRequests(connection: Connection, embedded: Promise<EmbeddedRunloom>): () => void {
  const subscriptions: { unsubscribe(): void }[] = [];
  void embedded.then(({ runloom, workspaces }) => {
    for (const { workspaceId } of workspaces) {
      subscriptions.push(
        runloom.workspaceEvents.subscribe(workspaceId, (published) => {
          void connection.sendNotification(WorkspaceEventNotification.type, { workspaceId, id: published.id, event: published.event });
        }),
      );
    }
  }, () => undefined);

  connection.onRequest(ListWorkspaces.type, async () => (await embedded).workspaces);

  connection.onRequest(ListProviders.type, () => [...PROVIDER_NAMES]);

  connection.onRequest(ListThreads.type, async ({ workspaceId }) => {
    const { runloom } = await embedded;
    const listed = await runloom.threads.list(EDITOR_ACCOUNT, workspaceId, THREAD_PAGE);
    const items = await Promise.all(listed.map(async (thread) => toListItem(thread, Boolean(await runloom.threadStreams.active(EDITOR_ACCOUNT, workspaceId, thread.id)))));
    return items.sort((left, right) => right.updatedAt.localeCompare(left.updatedAt));
  });

  connection.onRequest(CreateThread.type, async ({ workspaceId, title }) => {
    const { runloom } = await embedded;
    const threadId = `thread-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
    const { thread } = await runloom.threads.save(EDITOR_ACCOUNT, workspaceId, threadId, { title, messages: [] });
    return { workspaceId, threadId: thread.id, title: thread.title ?? title, updatedAt: thread.updated_at, streaming: false };
  });

  connection.onRequest(DeleteThread.type, async ({ workspaceId, threadId }) => {
    const { runloom } = await embedded;
    await runloom.threadStreams.cancel(EDITOR_ACCOUNT, workspaceId, threadId);
    await runloom.threads.delete(EDITOR_ACCOUNT, workspaceId, threadId);
  });

  connection.onRequest(GetThreadMessages.type, async ({ workspaceId, threadId }) => {
    const { runloom } = await embedded;
    const thread: Thread = await runloom.threads.get(EDITOR_ACCOUNT, workspaceId, threadId);
    return { title: thread.title ?? threadId, messages: thread.messages.map(toChatMessage) };
  });

  connection.onRequest(SendMessage.type, async ({ workspaceId, threadId, text, model }) => {
    const { runloom } = await embedded;
    const userMessageId = randomUUID();
    const message = { id: userMessageId, role: 'user' as const, parts: [{ type: 'text' as const, text }] };
    const stream = await runloom.threadStreams.reply(EDITOR_ACCOUNT, workspaceId, { threadId, message, model: model as never });
    void forwardChunks(connection, workspaceId, threadId, stream);
    return { streamId: stream.id, userMessageId };
  });

  connection.onRequest(StopReply.type, async ({ workspaceId, threadId }) => {
    const { runloom } = await embedded;
    return { stopped: await runloom.threadStreams.cancel(EDITOR_ACCOUNT, workspaceId, threadId) };
  });

  connection.onRequest(SetProviderCredentials.type, async ({ provider, credentials }) => {
    holdCredentials((await embedded).credentials, provider, credentials);
  });

  return () => {
    for (const subscription of subscriptions) subscription.unsubscribe();
  };
}

/** Sends the stream's chunks as they come, batched per read, until it ends. */
async function forwardChunks(
  connection: Connection,
  workspaceId: string,
  threadId: string,
  stream: { id: string; read(after: number): Promise<{ first: number; chunks: readonly string[]; ended: boolean }>; subscribe(): () => void },
): Promise<void> {
  const leave = stream.subscribe();
  try {
    for (let after = 0; ; ) {
      const read = await stream.read(after);
      after = read.first - 1 + read.chunks.length;
      const chunks = read.chunks.map((chunk) => JSON.parse(chunk) as Record<string, unknown>);
      await connection.sendNotification(ReplyChunks.type, { workspaceId, threadId, streamId: stream.id, chunks, ended: read.ended });
      if (read.ended) return;
    }
  } finally {
    leave();
  }
}

function toListItem(thread: ThreadMetadata, streaming: boolean): ThreadListItem {
  return { workspaceId: thread.workspace_id, threadId: thread.id, title: thread.title ?? thread.id, updatedAt: thread.updated_at, streaming };
}

function toChatMessage(message: UIMessage): ChatMessage {
  const text = message.parts
    .filter((part): part is { type: 'text'; text: string } => part.type === 'text' && typeof (part as { text?: unknown }).text === 'string')
    .map((part) => part.text)
    .join('');
  const status = (message.metadata as { status?: string } | undefined)?.status;
  return { id: message.id, role: message.role, text, ...(status && status !== 'complete' ? { status } : {}) };
}
