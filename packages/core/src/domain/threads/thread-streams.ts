import { inject, injectable } from 'inversify';
import { RunloomConfig } from '../../config';
import { DomainError } from '../errors';
import type { Lifecycle } from '../lifecycle';
import { settledInOrder } from '../settled-in-order';
import { Clock, type Timer } from '../../ports/clock';
import { IdGenerator } from '../../ports/id-generator';
import { Logger } from '../../ports/logger';
import { Metrics } from '../../ports/metrics';
import { ModelGateway, type ModelRequest } from '../../ports/model-gateway';
import { ProviderService } from '../providers/provider-service';
import { WorkspaceConfigService } from '../workspaces/workspace-config-service';
import { WorkspaceService } from '../workspaces/workspace-service';
import { ReplyBuilder, type ReplyStatus, type UIMessageChunk } from './reply-builder';
import { texts, toModelConversation } from './thread-history';
import type { StreamThreadInput, UIMessage } from './thread-schemas';
import { mergeMessages, ThreadService } from './thread-service';
import { MAX_STREAM_BUFFER_BYTES, type StreamDebugView, ThreadStream, ThreadStreamRegistry } from './thread-stream-registry';
import { ThreadStreamMarkers } from './thread-stream-markers';
import { ThreadStreamRelay } from './thread-stream-relay';

/**
 * How often the partial reply of a stream is written to its thread while it streams: what is
 * left, marked interrupted, when the process dies mid-reply.
 */
export const CHECKPOINT_INTERVAL_MS = 1000;

/** How often every instance looks for replies whose process died mid-stream, to mark them interrupted. */
export const ORPHAN_SWEEP_MS = 5000;

/** Why a stream stopped before the model finished: the reason its `AbortController` aborts with. */
class StreamStop extends Error {
  constructor(
    readonly status: Exclude<ReplyStatus, 'streaming' | 'complete'>,
    message: string,
  ) {
    super(message);
  }
}

const INTERRUPTED = 'the server stopped while the reply was streaming; the partial reply is kept';

/**
 * Streamed assistant replies of threads (docs/api.md#thread-streams). `reply` appends the user
 * message and an assistant message marked `streaming`, then generates in the background: the
 * model gateway's events become UI message chunks, buffered in a `ThreadStream` of the registry
 * that any number of HTTP subscribers read and rejoin; the client going away does not stop it.
 * The reply is saved when it ends (finished, failed, cancelled, idle past the bound), checkpointed
 * while it streams, and marked interrupted after a crash by this lifecycle's `start`; `stop` ends
 * every stream as interrupted.
 */
@injectable()
export class ThreadStreams implements Lifecycle {
  readonly name = 'thread-streams';
  /** The generation of each registered stream, settled once its reply is saved. */
  private readonly generations = new Map<ThreadStream, Promise<void>>();
  private sweeper: Timer | undefined;
  private sweeping = false;

  constructor(
    @inject(ThreadService) private readonly threads: ThreadService,
    @inject(ThreadStreamRegistry) private readonly registry: ThreadStreamRegistry,
    @inject(WorkspaceService) private readonly workspaces: WorkspaceService,
    @inject(WorkspaceConfigService) private readonly configs: WorkspaceConfigService,
    @inject(ProviderService) private readonly providers: ProviderService,
    @inject(ModelGateway) private readonly gateway: ModelGateway,
    @inject(ThreadStreamMarkers) private readonly markers: ThreadStreamMarkers,
    @inject(IdGenerator) private readonly ids: IdGenerator,
    @inject(Clock) private readonly clock: Clock,
    @inject(Logger) private readonly logger: Logger,
    @inject(Metrics) private readonly metrics: Metrics,
    @inject(RunloomConfig) private readonly config: RunloomConfig,
    @inject(ThreadStreamRelay) private readonly relay: ThreadStreamRelay,
  ) {}

  /**
   * Starts a reply on the thread and answers its stream. 400: no text, no model (request, then the
   * workspace config's `models.default`), a provider the account has not configured or has
   * disabled; 404: no such workspace or thread; 409: the thread is already streaming, or the
   * workspace is archived.
   */
  async reply(accountId: string, workspaceId: string, input: StreamThreadInput): Promise<ThreadStream> {
    // Asked first: its round trips to the disk go on while the checks below take the CPU (the
    // vendor call waits for it). Its failure (404, or 409 for a broken file) is answered in its turn.
    const read = this.threads.get(accountId, workspaceId, input.threadId);
    read.catch(() => undefined);
    await this.workspaces.requireWritable(accountId, workspaceId);
    const user = userMessage(input.message, () => this.ids.newId());
    const active = this.registry.get(workspaceId, input.threadId);
    if (active && !this.relay.isMirror(active)) throw busy(active);
    // Read beside the reads below: the thread may be streaming on another instance.
    const elsewhere = this.markers.elsewhere(accountId, workspaceId, input.threadId);
    elsewhere.catch(() => undefined);
    const model = input.model ?? (await this.configs.get(accountId, workspaceId)).models?.default;
    if (!model) {
      throw DomainError.invalid(
        `no model for thread ${input.threadId}: send model: {provider, model} with the request, or set models.default in the workspace config (PATCH /workspace/${workspaceId}/config)`,
      );
    }
    // The thread is appended to durably while the vendor is called. A provider error comes first.
    const [credentials, thread] = await settledInOrder(this.providers.getCredentials(accountId, model.provider), read);
    // A marker stays until the reply is saved: a reply that has just ended there is no conflict.
    const remote = await elsewhere;
    if (remote && (await this.relay.isStreaming(remote))) throw busy({ id: remote.id, workspaceId, threadId: remote.thread_id, startedAt: remote.started_at });
    // A mirror here of a reply that has ended there gives its place up; its subscribers read on to its end.
    if (active) this.registry.release(active);
    const stream = new ThreadStream(this.ids.newId(), accountId, workspaceId, input.threadId, this.ids.newId(), model, this.clock.now().toISOString());
    const racing = this.registry.claim(stream);
    if (racing) throw busy(racing);
    const builder = new ReplyBuilder(stream.messageId, { status: 'streaming', model, streamId: stream.id });
    const conversation = toModelConversation(mergeMessages(thread.messages, [user]));
    const request: ModelRequest = { provider: model.provider, model: model.model, credentials, ...conversation, signal: stream.abort.signal };
    // The marker goes first: a crash after it finds a streaming message to mark, or none.
    const marked = this.markers.record(stream);
    const recorded = this.recordStart(stream, user, builder, marked);
    // Only instances sharing the store can ask for the reply (a rejoin or a cancel there).
    const served = this.markers.shared ? this.relay.serve(stream, () => stopWith(stream, cancelledStop())) : undefined;
    this.generations.set(stream, this.generate(stream, builder, request, recorded).finally(() => served?.close()));
    // Instances sharing the database find a reply by its marker: there it is written before the
    // answer, so a rejoin elsewhere finds the reply from its first byte (the vendor is called meanwhile).
    if (this.markers.shared) await marked.catch(() => undefined);
    return stream;
  }

  /**
   * The thread's active stream, if it has one (a missing thread has none): generated here, or by
   * another instance and mirrored here.
   */
  async active(accountId: string, workspaceId: string, threadId: string): Promise<ThreadStream | undefined> {
    await this.workspaces.require(accountId, workspaceId);
    const local = this.registry.get(workspaceId, threadId);
    if (local) return local;
    const remote = await this.markers.elsewhere(accountId, workspaceId, threadId);
    return remote && this.relay.mirror(remote);
  }

  /**
   * Stops the thread's reply and waits until the partial reply is saved (marked cancelled);
   * false when nothing was streaming. 404 for a thread without a file.
   */
  async cancel(accountId: string, workspaceId: string, threadId: string): Promise<boolean> {
    await this.workspaces.require(accountId, workspaceId);
    const stream = this.registry.get(workspaceId, threadId);
    if (stream && !this.relay.isMirror(stream)) {
      stream.abort.abort(cancelledStop());
      await this.generations.get(stream);
      return true;
    }
    // Generated by another instance: cancelled there, answered once saved there.
    const remote = await this.markers.elsewhere(accountId, workspaceId, threadId);
    if (remote && (await this.relay.cancel(remote))) return true;
    await this.threads.get(accountId, workspaceId, threadId);
    return false;
  }

  /** The workspace's active streams with their subscriber counts. */
  async debug(accountId: string, workspaceId: string): Promise<StreamDebugView[]> {
    await this.workspaces.require(accountId, workspaceId);
    return this.registry.inWorkspace(workspaceId).map((stream) => stream.debugView());
  }

  /**
   * Takes this process's liveness hold (named in its markers), then marks as interrupted the
   * replies whose process died mid-stream (never left pending): at start, and every
   * `ORPHAN_SWEEP_MS` on every instance, so a reply of a killed instance sharing the store is
   * marked by the others. A live instance's replies are left alone.
   */
  async start(): Promise<void> {
    this.metrics.gauge('runloom_thread_replies_streaming', 'Thread replies being generated', () =>
      Promise.resolve([{ labels: {}, value: this.registry.all().length }]),
    );
    await this.markers.open();
    await this.interruptOrphans();
    this.sweeper = this.clock.setInterval(() => void this.interruptOrphans(), ORPHAN_SWEEP_MS);
  }

  /** Ends every stream as interrupted and waits until each partial reply is saved. */
  async stop(): Promise<void> {
    this.sweeper?.cancel();
    this.relay.stopMirroring();
    for (const stream of this.registry.all()) stream.abort.abort(new StreamStop('interrupted', INTERRUPTED));
    await Promise.all(this.generations.values());
    await this.markers.close();
  }

  /** Marks each orphaned reply interrupted with its last checkpoint, then forgets its marker. */
  private async interruptOrphans(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      for (const marker of await this.markers.orphans()) {
        try {
          await this.threads.change(marker.account_id, marker.workspace_id, marker.thread_id, (thread) => ({
            ...thread,
            messages: thread.messages.map((message) => (message.id === marker.message_id ? interrupted(message) : message)),
          }));
        } catch (error) {
          // The thread or its workspace is gone, or its file broken: nothing left to mark.
          this.logger.warn({ thread: marker.thread_id, error: (error as Error).message }, 'an interrupted thread reply could not be marked');
        }
        // Another instance may have forgotten it first.
        await this.markers.remove(marker.account_id, marker.id).catch(() => undefined);
      }
    } catch (error) {
      this.logger.warn({ error: (error as Error).message }, 'looking for thread replies cut off by a dead process failed');
    } finally {
      this.sweeping = false;
    }
  }

  /**
   * Makes the reply's start durable: the marker (`marked`, its write started by `reply`), then the
   * user message and the assistant message marked `streaming` appended to the thread, queued at
   * once (the reply's saves queue behind it). Runs while the vendor is called and may outlast the
   * reply (neither the first delta nor `[DONE]` waits for a disk write); a failure ends the stream
   * with an error chunk, or is logged when it has ended (the reply is then not kept). False when
   * it failed.
   */
  private async recordStart(stream: ThreadStream, user: UIMessage, builder: ReplyBuilder, marked: Promise<void>): Promise<boolean> {
    const placeholder = builder.message();
    try {
      await this.threads.changeWhen(
        stream.accountId,
        stream.workspaceId,
        stream.threadId,
        marked.then(() => true),
        (current) => ({ ...current, messages: mergeMessages(current.messages, [user, placeholder]) }),
      );
      return true;
    } catch (error) {
      const reason = `the thread could not be saved, so the reply was ended: ${(error as Error).message}`;
      this.logger.warn({ stream: stream.id, thread: stream.threadId, error: (error as Error).message }, 'the start of a thread reply could not be saved');
      stopWith(stream, new StreamStop('error', reason));
      return false;
    }
  }

  private async generate(stream: ThreadStream, builder: ReplyBuilder, request: ModelRequest, recorded: Promise<boolean>): Promise<void> {
    const push = (chunks: UIMessageChunk[]): void => {
      if (!stream.append(chunks)) {
        stopWith(stream, new StreamStop('error', `the reply passed the stream buffer of ${MAX_STREAM_BUFFER_BYTES} bytes and was ended`));
      }
    };
    push(builder.start());
    const idle = this.watchIdle(stream);
    let checkpoint: Timer | undefined;
    try {
      for await (const event of this.gateway.stream(request)) {
        idle.touch();
        // Once stopped, the gateway's own `aborted` error says less than the reason we stopped for.
        if (stream.abort.signal.aborted) break;
        push(builder.push(event));
        checkpoint ??= builder.done
          ? undefined
          : this.clock.setTimeout(() => {
              checkpoint = undefined;
              void this.save(stream, builder.message(), recorded);
            }, CHECKPOINT_INTERVAL_MS);
      }
    } finally {
      idle.stop();
      checkpoint?.cancel();
    }
    if (!builder.done) {
      const reason = stream.abort.signal.reason;
      const stop = reason instanceof StreamStop ? reason : new StreamStop('error', 'the model stream ended without finishing');
      stream.append(builder.fail(stop.status, stop.message), true);
    }
    // The save is queued before the stream ends, not awaited: the client's last chunk waits for no
    // disk write (the start's included), and a read of the thread (a next POST's too) queues
    // behind the save.
    const saved = this.save(stream, builder.message(), recorded);
    this.registry.release(stream);
    stream.end();
    await saved;
    await this.markers.remove(stream.accountId, stream.id).catch((error: unknown) => {
      this.logger.warn({ stream: stream.id, error: (error as Error).message }, 'a thread stream marker could not be removed');
    });
    this.generations.delete(stream);
  }

  /**
   * Writes the reply as it is now into its thread, queued at once behind the start's write and
   * skipped when that failed (`recorded`); a thread deleted (or broken) meanwhile keeps nothing,
   * and says so in the log.
   */
  private save(stream: ThreadStream, message: UIMessage, recorded: Promise<boolean>): Promise<void> {
    return this.threads
      .changeWhen(stream.accountId, stream.workspaceId, stream.threadId, recorded, (thread) => ({
        ...thread,
        messages: mergeMessages(thread.messages, [message]),
      }))
      .then(
        () => undefined,
        (error: unknown) => {
          this.logger.warn({ stream: stream.id, thread: stream.threadId, error: (error as Error).message }, 'a thread reply could not be saved');
        },
      );
  }

  /** Stops the stream once the vendor has sent nothing for `threadStreamIdleTimeoutMs` (on the `Clock`). */
  private watchIdle(stream: ThreadStream): { touch(): void; stop(): void } {
    const timeoutMs = this.config.threadStreamIdleTimeoutMs;
    let last = this.clock.now().getTime();
    let timer: Timer;
    const arm = (ms: number): void => {
      timer = this.clock.setTimeout(() => {
        const quiet = this.clock.now().getTime() - last;
        if (quiet < timeoutMs) return arm(timeoutMs - quiet);
        stopWith(stream, new StreamStop('error', `the model sent nothing for ${timeoutMs / 1000} s; the reply was ended and what came is kept`));
      }, ms);
    };
    arm(timeoutMs);
    return {
      touch: () => (last = this.clock.now().getTime()),
      stop: () => timer.cancel(),
    };
  }
}

function cancelledStop(): StreamStop {
  return new StreamStop('cancelled', 'the reply was cancelled');
}

/** Ends the stream for `stop`'s reason, unless it was already stopped for another. */
function stopWith(stream: ThreadStream, stop: StreamStop): void {
  if (!stream.abort.signal.aborted) stream.abort.abort(stop);
}

function busy(stream: Pick<ThreadStream, 'id' | 'workspaceId' | 'threadId' | 'startedAt'>): DomainError {
  return DomainError.conflict(
    `thread ${stream.threadId} is streaming a reply (stream ${stream.id}, started ${stream.startedAt}); rejoin it with GET /workspace/${stream.workspaceId}/threads/stream?threadId=${stream.threadId} or cancel it with DELETE /workspace/${stream.workspaceId}/threads/${stream.threadId}/stream`,
  );
}

/** The request's message as a user UI message; 400 when it has neither text nor a file. */
function userMessage(message: StreamThreadInput['message'], newId: () => string): UIMessage {
  const ui: UIMessage =
    typeof message === 'string' ? { id: newId(), role: 'user', parts: [{ type: 'text', text: message }] } : { ...message, id: message.id ?? newId() };
  const hasContent = texts(ui).some((text) => text.trim() !== '') || ui.parts.some((part) => part.type === 'file');
  if (!hasContent) {
    throw DomainError.invalid('message is empty: send a non-empty string, or a UI message with a non-empty text part', [
      { path: 'message', message: 'the message has no text' },
    ]);
  }
  return ui;
}

/** A reply a previous process left streaming, marked interrupted with what it had saved. */
function interrupted(message: UIMessage): UIMessage {
  const metadata = (typeof message.metadata === 'object' && message.metadata !== null ? message.metadata : {}) as Record<string, unknown>;
  if (metadata.status !== 'streaming') return message;
  return {
    ...message,
    parts: message.parts.map((part) => (part.state === 'streaming' ? { ...part, state: 'done' } : part)),
    metadata: { ...metadata, status: 'interrupted', error: INTERRUPTED },
  };
}
