import type { Connection } from 'vscode-languageserver/node';
import { parse } from 'yaml';
import {
  ActOnProcessRun,
  CancelExecution,
  CommandOutput,
  CreateThread,
  DeleteThread,
  ExecuteCommand,
  GetThreadMessages,
  ListCommands,
  ListProcessRuns,
  ListProviders,
  ListThreads,
  ListWorkspaces,
  ReplyChunks,
  SendMessage,
  SetProviderCredentials,
  SetShellCommands,
  StartProcessRun,
  StopReply,
  WorkspaceEventNotification,
} from '../common/protocol';
import type { ExecutionUpdate, ReplyChunkBatch, RunloomBackend } from './runloom-backend';

/**
 * Answers the extension's custom requests (`common/protocol.ts`) with whichever backend the server
 * runs — the embedded core or a remote `runloom serve` — and forwards what it publishes (workspace
 * events, reply chunks, command output) as notifications. `backend` resolves once it has started;
 * requests made before wait for it. Answers the function that stops the forwarding.
 */
export function serveBackendRequests(connection: Connection, backend: Promise<RunloomBackend>): () => void {
  const subscriptions: { unsubscribe(): void }[] = [];
  void backend.then((started) => {
    for (const { workspaceId } of started.workspaces) {
      subscriptions.push(
        // A notification the closing connection cannot take is nobody's loss.
        started.subscribe(workspaceId, ({ id, event }) => void connection.sendNotification(WorkspaceEventNotification.type, { workspaceId, id, event }).catch(() => undefined)),
      );
    }
  }, () => undefined);

  connection.onRequest(ListWorkspaces.type, async () => (await backend).workspaces);
  connection.onRequest(ListProviders.type, async () => (await backend).providers());
  connection.onRequest(SetProviderCredentials.type, async ({ provider, credentials }) => (await backend).setProviderCredentials(provider, credentials));
  connection.onNotification(SetShellCommands.type, ({ enabled }) => void backend.then((started) => started.setShellCommands(enabled), () => undefined));

  connection.onRequest(ListThreads.type, async ({ workspaceId }) => (await backend).listThreads(workspaceId));
  connection.onRequest(CreateThread.type, async ({ workspaceId, title }) => (await backend).createThread(workspaceId, title));
  connection.onRequest(DeleteThread.type, async ({ workspaceId, threadId }) => (await backend).deleteThread(workspaceId, threadId));
  connection.onRequest(GetThreadMessages.type, async ({ workspaceId, threadId }) => (await backend).threadMessages(workspaceId, threadId));
  connection.onRequest(SendMessage.type, async ({ workspaceId, threadId, text, model }) => {
    const { streamId, userMessageId, reply } = await (await backend).sendMessage(workspaceId, threadId, text, model);
    void forwardReply(connection, { workspaceId, threadId, streamId }, reply).catch(() => undefined);
    return { streamId, userMessageId };
  });
  connection.onRequest(StopReply.type, async ({ workspaceId, threadId }) => ({ stopped: await (await backend).stopReply(workspaceId, threadId) }));

  connection.onRequest(ListCommands.type, async ({ workspaceId }) => (await backend).listCommands(workspaceId));
  connection.onRequest(ExecuteCommand.type, async ({ workspaceId, trigger, args }) => {
    const { runId, updates } = await (await backend).executeCommand(workspaceId, trigger, args);
    void forwardOutput(connection, { workspaceId, trigger, runId }, updates).catch(() => undefined);
    return { runId };
  });
  connection.onRequest(CancelExecution.type, async ({ workspaceId, trigger, runId }) => ({ status: await (await backend).cancelExecution(workspaceId, trigger, runId) }));

  connection.onRequest(ListProcessRuns.type, async ({ workspaceId }) => (await backend).listProcessRuns(workspaceId));
  // The file's problems were shown as diagnostics; creating the run checks the spec again (400).
  connection.onRequest(StartProcessRun.type, async ({ workspaceId, processId, specYaml }) => (await backend).startProcessRun(workspaceId, processId, parse(specYaml, { maxAliasCount: 100 })));
  connection.onRequest(ActOnProcessRun.type, async ({ workspaceId, runId, action, phaseId, taskId }) =>
    (await backend).actOnProcessRun(workspaceId, runId, action, phaseId && taskId ? { phaseId, taskId } : undefined),
  );

  return () => {
    for (const subscription of subscriptions) subscription.unsubscribe();
  };
}

async function forwardReply(connection: Connection, stream: { workspaceId: string; threadId: string; streamId: string }, reply: AsyncIterable<ReplyChunkBatch>): Promise<void> {
  try {
    for await (const { chunks, ended } of reply) await connection.sendNotification(ReplyChunks.type, { ...stream, chunks, ended });
  } catch (error) {
    // The reply's connection broke (a remote server went away): the panel shows why and stops waiting.
    const errorText = `the reply stream broke: ${error instanceof Error ? error.message : String(error)}`;
    await connection.sendNotification(ReplyChunks.type, { ...stream, chunks: [{ type: 'error', errorText }], ended: true });
  }
}

async function forwardOutput(connection: Connection, execution: { workspaceId: string; trigger: string; runId: string }, updates: AsyncIterable<ExecutionUpdate>): Promise<void> {
  try {
    for await (const update of updates) {
      await connection.sendNotification(CommandOutput.type, update.type === 'output' ? { ...execution, text: update.text } : { ...execution, status: update.status, error: update.error });
    }
  } catch (error) {
    await connection.sendNotification(CommandOutput.type, { ...execution, status: 'unknown', error: `its output stream broke: ${error instanceof Error ? error.message : String(error)}` });
  }
}
