import { injectable } from 'inversify';
import type { UIMessageChunk } from './reply-builder';

/**
 * Bytes of chunks one stream keeps for subscribers that join late (a rejoin replays from the
 * start). Past it the reply is ended with an error chunk (see `ThreadStreams`); about 200,000
 * text deltas, far beyond any reply a model writes in one turn.
 */
export const MAX_STREAM_BUFFER_BYTES = 16 * 1024 * 1024;

/** One subscriber's next read: the chunks (as JSON) after its position, and whether the stream has ended. */
export interface StreamRead {
  /** 1-based number of the first chunk in `chunks` (the SSE `id:` of its frame). */
  first: number;
  chunks: readonly string[];
  ended: boolean;
}

/** What `GET …/streams/debug` shows of a stream. */
export interface StreamDebugView {
  stream_id: string;
  thread_id: string;
  message_id: string;
  model: { provider: string; model: string };
  started_at: string;
  chunks: number;
  buffered_bytes: number;
  subscribers: number;
}

/**
 * One reply being generated: every chunk so far, kept (as JSON, serialised once for every
 * subscriber) until the reply has been saved, so any number of subscribers read it from the start
 * or from a chunk number, each at its own pace: a slow or gone client never slows the generation.
 */
export class ThreadStream {
  private readonly chunks: string[] = [];
  private bytes = 0;
  private ended = false;
  private subscriberCount = 0;
  /** Called (and forgotten) at the next append or at the end: what waiting subscribers wait with. */
  private waiting: (() => void)[] = [];
  readonly abort = new AbortController();

  constructor(
    readonly id: string,
    readonly accountId: string,
    readonly workspaceId: string,
    readonly threadId: string,
    readonly messageId: string,
    readonly model: { provider: string; model: string },
    readonly startedAt: string,
  ) {}

  /** Adds chunks; false (and nothing added) once the buffer would pass `MAX_STREAM_BUFFER_BYTES`, unless `force`. */
  append(chunks: readonly UIMessageChunk[], force = false): boolean {
    if (this.ended || chunks.length === 0) return true;
    const texts = chunks.map((chunk) => JSON.stringify(chunk));
    const size = texts.reduce((sum, text) => sum + text.length, 0);
    if (!force && this.bytes + size > MAX_STREAM_BUFFER_BYTES) return false;
    this.bytes += size;
    for (const text of texts) this.chunks.push(text);
    this.notify();
    return true;
  }

  /** No chunk follows; subscribers finish once they have read everything. */
  end(): void {
    this.ended = true;
    this.notify();
  }

  /** The chunks after number `after` (0: from the start) there are now; none when it has no more yet. */
  chunksAfter(after: number): StreamRead {
    return { first: after + 1, chunks: after < this.chunks.length ? this.chunks.slice(after) : [], ended: this.ended };
  }

  /** The chunks after number `after`, waiting for one when there is none yet. */
  async read(after: number): Promise<StreamRead> {
    while (after >= this.chunks.length && !this.ended) await new Promise<void>((resolve) => this.whenChanged(resolve));
    return this.chunksAfter(after);
  }

  /**
   * Calls `listener` once, synchronously, at the next append or at the end (so a subscriber writes
   * a chunk as it is appended); the returned function forgets it.
   */
  whenChanged(listener: () => void): () => void {
    this.waiting.push(listener);
    return () => {
      const index = this.waiting.indexOf(listener);
      if (index !== -1) this.waiting.splice(index, 1);
    };
  }

  /** Counts a subscriber until the returned function is called. */
  subscribe(): () => void {
    this.subscriberCount += 1;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.subscriberCount -= 1;
    };
  }

  debugView(): StreamDebugView {
    return {
      stream_id: this.id,
      thread_id: this.threadId,
      message_id: this.messageId,
      model: this.model,
      started_at: this.startedAt,
      chunks: this.chunks.length,
      buffered_bytes: this.bytes,
      subscribers: this.subscriberCount,
    };
  }

  private notify(): void {
    if (this.waiting.length === 0) return;
    const waiting = this.waiting;
    this.waiting = [];
    for (const listener of waiting) listener();
  }
}

/**
 * The replies being generated in this process, one at most per thread. In memory: a stream lives
 * as long as its generation; what survives a restart is the saved partial reply
 * (`ThreadStreamRecovery`).
 */
@injectable()
export class ThreadStreamRegistry {
  private readonly streams = new Map<string, ThreadStream>();

  get(workspaceId: string, threadId: string): ThreadStream | undefined {
    return this.streams.get(key(workspaceId, threadId));
  }

  /** Registers `stream`; the stream already registered for its thread, when there is one (and then nothing changes). */
  claim(stream: ThreadStream): ThreadStream | undefined {
    const existing = this.streams.get(key(stream.workspaceId, stream.threadId));
    if (existing) return existing;
    this.streams.set(key(stream.workspaceId, stream.threadId), stream);
    return undefined;
  }

  release(stream: ThreadStream): void {
    if (this.streams.get(key(stream.workspaceId, stream.threadId)) === stream) this.streams.delete(key(stream.workspaceId, stream.threadId));
  }

  inWorkspace(workspaceId: string): ThreadStream[] {
    return [...this.streams.values()].filter((stream) => stream.workspaceId === workspaceId);
  }

  all(): ThreadStream[] {
    return [...this.streams.values()];
  }
}

function key(workspaceId: string, threadId: string): string {
  return `${workspaceId}/${threadId}`;
}
