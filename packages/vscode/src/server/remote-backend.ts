import { randomUUID } from 'node:crypto';
import { type Command, type ProcessRunView, PROVIDER_NAMES, type Thread, type ThreadMetadata } from '@runloom/core';
import type { ChatMessage, CommandItem, FolderWorkspace, ModelChoice, ProcessRunItem, RemoteServer, ThreadListItem } from '../common/protocol';
import { newThreadId, toChatMessage, toCommandItem, toProcessRunItem } from './embedded-backend';
import { readEventStream } from './event-stream-reader';
import { type ExecutionUpdate, FINISHED_EXECUTION, type ReplyChunkBatch, type RunloomBackend, type WorkspaceEventHandler } from './runloom-backend';

/** Listed per view refresh: the most one page of the API holds. */
const PAGE = 'limit=500&offset=0';
/** A token is fetched again this long before it expires. */
const TOKEN_MARGIN_MS = 60_000;
/** Wait before reopening a workspace's event stream that broke (the server's own `retry:`). */
const RECONNECT_MS = 1_000;

/**
 * The requests answered by a remote `runloom serve` over its HTTP API (docs/api.md) instead of the
 * embedded core: a client-credentials token, the account's workspaces, threads and their replies as
 * the UI message stream (SSE), commands with their output events, process runs, and each
 * workspace's event stream (SSE, resumed with `Last-Event-ID` when it breaks).
 */
export class RemoteBackend implements RunloomBackend {
  private token: { value: string; expiresAt: number } | undefined;
  private readonly base: string;
  /**
   * The API lists runs per process; the view shows the runs of every process this server has been
   * seen with: those of the workspace's process commands, started here, or named by run events.
   */
  private readonly processIds = new Map<string, Set<string>>();
  private readonly streams = new Set<AbortController>();
  workspaces: FolderWorkspace[] = [];

  private constructor(private readonly server: RemoteServer) {
    this.base = server.url.replace(/\/+$/, '');
  }

  /** Signs in (a 401 names the client id) and lists the account's active workspaces. */
  static async connect(server: RemoteServer): Promise<RemoteBackend> {
    if (!server.clientId || !server.clientSecret) {
      throw new Error('remote mode needs runloom.remote.clientId in the settings and a client secret: run "Runloom: Set Remote Client Secret"');
    }
    const backend = new RemoteBackend(server);
    const listed = await backend.call<{ data: { id: string; name: string; status: string }[] }>('GET', `/workspaces?${PAGE}`);
    backend.workspaces = listed.data.filter((workspace) => workspace.status === 'active').map((workspace) => ({ folder: `${backend.base}/workspace/${workspace.id}`, workspaceId: workspace.id, name: workspace.name }));
    return backend;
  }

  async listThreads(workspaceId: string): Promise<ThreadListItem[]> {
    const [threads, streams] = await Promise.all([
      this.call<{ data: ThreadMetadata[] }>('GET', `${this.workspacePath(workspaceId)}/threads?${PAGE}`),
      this.call<{ data: { thread_id: string }[] }>('GET', `${this.workspacePath(workspaceId)}/streams/debug`),
    ]);
    const streaming = new Set(streams.data.map((stream) => stream.thread_id));
    return threads.data.map((thread) => ({ workspaceId, threadId: thread.id, title: thread.title ?? thread.id, updatedAt: thread.updated_at, streaming: streaming.has(thread.id) }));
  }

  async createThread(workspaceId: string, title: string): Promise<ThreadListItem> {
    const threadId = newThreadId();
    const { data } = await this.call<{ data: Thread }>('POST', `${this.threadPath(workspaceId, threadId)}/save`, { title, messages: [] });
    return { workspaceId, threadId: data.id, title: data.title ?? title, updatedAt: data.updated_at, streaming: false };
  }

  async deleteThread(workspaceId: string, threadId: string): Promise<void> {
    await this.call('DELETE', `${this.workspacePath(workspaceId)}/threads/${encodeURIComponent(threadId)}/stream`);
    await this.call('DELETE', this.threadPath(workspaceId, threadId));
  }

  async threadMessages(workspaceId: string, threadId: string): Promise<{ title: string; messages: ChatMessage[] }> {
    const { data } = await this.call<{ data: Thread }>('GET', this.threadPath(workspaceId, threadId));
    return { title: data.title ?? threadId, messages: data.messages.map(toChatMessage) };
  }

  async sendMessage(workspaceId: string, threadId: string, text: string, model: ModelChoice | undefined) {
    const userMessageId = randomUUID();
    const response = await this.send('POST', `${this.workspacePath(workspaceId)}/threads/stream`, {
      threadId,
      message: { id: userMessageId, role: 'user', parts: [{ type: 'text', text }] },
      ...(model ? { model } : {}),
    });
    const frames = readEventStream(response.body!)[Symbol.asyncIterator]();
    // The first frame is the `start` chunk (sent as the reply starts), which names the stream.
    const first = await frames.next();
    const start = first.done || first.value.data === '[DONE]' ? undefined : (JSON.parse(first.value.data) as Record<string, unknown>);
    const streamId = String((start?.messageMetadata as { streamId?: unknown } | undefined)?.streamId ?? '');
    async function* reply(): AsyncIterable<ReplyChunkBatch> {
      if (!start) {
        yield { chunks: [], ended: true };
        return;
      }
      yield { chunks: [start], ended: false };
      for (let next = await frames.next(); !next.done; next = await frames.next()) {
        if (next.value.data === '[DONE]') {
          yield { chunks: [], ended: true };
          return;
        }
        yield { chunks: [JSON.parse(next.value.data) as Record<string, unknown>], ended: false };
      }
      throw new Error('the server closed the reply before its end');
    }
    return { streamId, userMessageId, reply: reply() };
  }

  async stopReply(workspaceId: string, threadId: string): Promise<boolean> {
    const { message } = await this.call<{ message: string }>('DELETE', `${this.workspacePath(workspaceId)}/threads/${encodeURIComponent(threadId)}/stream`);
    // The route answers 200 either way; only its message tells whether a reply was streaming.
    return !message.startsWith('no reply is streaming');
  }

  providers(): string[] {
    return [...PROVIDER_NAMES];
  }

  async setProviderCredentials(provider: string): Promise<void> {
    throw new Error(`the remote server keeps its own provider credentials: its operator sets ${provider}'s with PUT /v1/llm-provider/${provider}`);
  }

  async listCommands(workspaceId: string): Promise<CommandItem[]> {
    const { data } = await this.call<{ data: (Command & { process_id?: string | null })[] }>('GET', `${this.workspacePath(workspaceId)}/commands?${PAGE}`);
    for (const command of data) if (command.type === 'process' && command.process_id) this.processesOf(workspaceId).add(command.process_id);
    return data.map((command) => toCommandItem(workspaceId, command));
  }

  async executeCommand(workspaceId: string, trigger: string, args: string[]): Promise<{ runId: string; updates: AsyncIterable<ExecutionUpdate> }> {
    const path = `${this.workspacePath(workspaceId)}/command/${encodeURIComponent(trigger)}`;
    const { data } = await this.call<{ data: { runId: string } }>('POST', `${path}/execute`, { args });
    const response = await this.send('GET', `${path}/executions/${encodeURIComponent(data.runId)}/events`);
    async function* updates(): AsyncIterable<ExecutionUpdate> {
      for await (const frame of readEventStream(response.body!)) {
        if (frame.event === 'output') {
          yield { type: 'output', text: (JSON.parse(frame.data) as { text: string }).text };
        } else if (frame.event === 'status') {
          const execution = JSON.parse(frame.data) as { status: string; error: { message: string } | null };
          if (FINISHED_EXECUTION.has(execution.status)) {
            yield { type: 'end', status: execution.status, error: execution.error?.message };
            return;
          }
        }
      }
      throw new Error('the server closed the output before the execution ended');
    }
    return { runId: data.runId, updates: updates() };
  }

  async cancelExecution(workspaceId: string, trigger: string, runId: string): Promise<string> {
    const { data } = await this.call<{ data: { status: string } }>('DELETE', `${this.workspacePath(workspaceId)}/command/${encodeURIComponent(trigger)}/executions/${encodeURIComponent(runId)}`);
    return data.status;
  }

  async listProcessRuns(workspaceId: string): Promise<ProcessRunItem[]> {
    const lists = await Promise.all(
      [...this.processesOf(workspaceId)].map((processId) =>
        this.call<{ data: ProcessRunView[] }>('GET', `${this.workspacePath(workspaceId)}/processes/${encodeURIComponent(processId)}/runs?${PAGE}`),
      ),
    );
    return lists.flatMap((list) => list.data.map(toProcessRunItem));
  }

  async startProcessRun(workspaceId: string, processId: string, spec: unknown): Promise<ProcessRunItem> {
    const { data } = await this.call<{ data: ProcessRunView }>('POST', `${this.workspacePath(workspaceId)}/processes/${encodeURIComponent(processId)}/runs`, { spec });
    this.processesOf(workspaceId).add(processId);
    return (await this.actOnProcessRun(workspaceId, data.id, 'start')).run;
  }

  async actOnProcessRun(workspaceId: string, runId: string, action: string, task?: { phaseId: string; taskId: string }): Promise<{ message: string; run: ProcessRunItem }> {
    const run = `${this.workspacePath(workspaceId)}/processes/runs/${encodeURIComponent(runId)}`;
    const done = await (() => {
      switch (action) {
        case 'retry':
        case 'skip':
          if (!task) throw new Error(`${action} needs the task's phase and id`);
          return this.call<{ message: string; data: ProcessRunView }>('POST', `${run}/tasks/${encodeURIComponent(task.phaseId)}/${encodeURIComponent(task.taskId)}/${action}`);
        case 'approve':
        case 'reject':
          return this.call<{ message: string; data: ProcessRunView }>('POST', `${run}/approve`, { ...task, decision: action });
        default:
          return this.call<{ message: string; data: ProcessRunView }>('POST', `${run}/${action}`);
      }
    })();
    return { message: done.message, run: toProcessRunItem(done.data) };
  }

  /** Follows the workspace's event stream, reopening it after `Last-Event-ID` when it breaks. */
  subscribe(workspaceId: string, handler: WorkspaceEventHandler): { unsubscribe(): void } {
    const abort = new AbortController();
    this.streams.add(abort);
    void (async () => {
      let lastId: string | undefined;
      while (!abort.signal.aborted) {
        try {
          const response = await this.send('GET', `${this.workspacePath(workspaceId)}/events`, undefined, { signal: abort.signal, headers: lastId ? { 'last-event-id': lastId } : {} });
          for await (const frame of readEventStream(response.body!)) {
            if (frame.event !== 'workspace-event') continue;
            lastId = frame.id ?? lastId;
            const event = JSON.parse(frame.data) as { type: string; process_id?: unknown; [field: string]: unknown };
            if (event.type === 'process.run.updated' && typeof event.process_id === 'string') this.processesOf(workspaceId).add(event.process_id);
            handler({ id: Number(frame.id), event });
          }
        } catch {
          // The server went away or restarted: try again after its retry delay.
        }
        if (!abort.signal.aborted) await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
      }
    })();
    return {
      unsubscribe: () => {
        abort.abort();
        this.streams.delete(abort);
      },
    };
  }

  /** The remote server's operator decides (`--enable-shell-commands`), not the editor. */
  setShellCommands(): void {}

  /** The remote workspaces' files are on the server, not in the open folders. */
  async filesChanged(): Promise<void> {}

  async close(): Promise<void> {
    for (const abort of this.streams) abort.abort();
    this.streams.clear();
  }

  private workspacePath(workspaceId: string): string {
    return `/workspace/${encodeURIComponent(workspaceId)}`;
  }

  private threadPath(workspaceId: string, threadId: string): string {
    return `${this.workspacePath(workspaceId)}/thread/${encodeURIComponent(threadId)}`;
  }

  private processesOf(workspaceId: string): Set<string> {
    let known = this.processIds.get(workspaceId);
    if (!known) this.processIds.set(workspaceId, (known = new Set()));
    return known;
  }

  /** A JSON call; answers the parsed body. */
  private async call<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
    return (await (await this.send(method, path, body)).json()) as T;
  }

  /** Sends with a bearer token (fetched again once when the server answers 401); a non-2xx answer throws its `error`. */
  private async send(method: string, path: string, body?: unknown, options: { signal?: AbortSignal; headers?: Record<string, string> } = {}): Promise<Response> {
    for (let attempt = 0; ; attempt += 1) {
      const response = await fetch(`${this.base}${path}`, {
        method,
        signal: options.signal,
        headers: { authorization: `Bearer ${await this.bearer(attempt > 0)}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (response.status === 401 && attempt === 0) continue;
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await errorOf(response)}`);
      return response;
    }
  }

  private async bearer(renew: boolean): Promise<string> {
    if (!renew && this.token && Date.now() < this.token.expiresAt - TOKEN_MARGIN_MS) return this.token.value;
    const response = await fetch(`${this.base}/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: this.server.clientId, client_secret: this.server.clientSecret }),
    });
    if (!response.ok) throw new Error(`${this.base} refused the client ${this.server.clientId}: ${response.status} ${await errorOf(response)}`);
    const { access_token, expires_in } = (await response.json()) as { access_token: string; expires_in: number };
    this.token = { value: access_token, expiresAt: Date.now() + expires_in * 1000 };
    return access_token;
  }
}

/** What an error answer says (`{error}` of the API's conventions), else its status text. */
async function errorOf(response: Response): Promise<string> {
  const text = await response.text().catch(() => '');
  try {
    const parsed = JSON.parse(text) as { error?: unknown; error_description?: unknown };
    return String(parsed.error_description ?? parsed.error ?? response.statusText);
  } catch {
    return text.slice(0, 200) || response.statusText;
  }
}
