import { inject, injectable } from 'inversify';
import { type FollowedSource, LiveRelay, type ServedSource } from '../workspace-events/live-relay';
import type { UIMessageChunk } from './reply-builder';
import { ThreadStream, ThreadStreamRegistry } from './thread-stream-registry';

/** What another instance's stream is known by here: its marker in the store. */
export interface RemoteStream {
  id: string;
  account_id: string;
  workspace_id: string;
  thread_id: string;
  message_id: string;
  started_at: string;
  /** Absent on markers written before it was recorded. */
  model?: { provider: string; model: string };
}

/**
 * Thread replies across instances (ARCHITECTURE.md, "Beyond one machine"), over the `LiveRelay`:
 * a reply generated here is served under its stream id; a reply another instance generates is
 * mirrored here on demand as a `ThreadStream` in this process's registry, fed with the chunks the
 * generating instance relays (from the first, so rejoins and `Last-Event-ID` work as on that
 * instance) and ended with it. Every subscriber here shares the one mirror. The single-instance
 * path pays a subscription in memory per reply and nothing per chunk.
 */
@injectable()
export class ThreadStreamRelay {
  /** The mirrors in this process, with their following of the generating instance. */
  private readonly mirrors = new Map<ThreadStream, FollowedSource>();

  constructor(
    @inject(LiveRelay) private readonly relay: LiveRelay,
    @inject(ThreadStreamRegistry) private readonly registry: ThreadStreamRegistry,
  ) {}

  /** Makes `stream`, generated here, reachable from the other instances until `close`; `cancel` is what a cancel from one of them does. */
  serve(stream: ThreadStream, cancel: () => void): ServedSource {
    return this.relay.serve(stream.workspaceId, keyOf(stream.id), {
      items: () => chunksOf(stream),
      cancel,
      // Ended once it leaves the registry, though served until its reply is saved.
      running: () => this.registry.get(stream.workspaceId, stream.threadId) === stream,
    });
  }

  /** Whether `stream` mirrors another instance's reply (rather than being generated here). */
  isMirror(stream: ThreadStream): boolean {
    return this.mirrors.has(stream);
  }

  /**
   * The reply `remote` names, mirrored here once its instance answers; undefined when it does not
   * answer in time (the reply ended meanwhile, or its instance is gone).
   */
  async mirror(remote: RemoteStream): Promise<ThreadStream | undefined> {
    const mirror = new ThreadStream(
      remote.id,
      remote.account_id,
      remote.workspace_id,
      remote.thread_id,
      remote.message_id,
      remote.model ?? { provider: 'unknown', model: 'unknown' },
      remote.started_at,
    );
    const racing = this.registry.claim(mirror);
    if (racing) return racing;
    const followed = this.relay.follow(remote.workspace_id, keyOf(remote.id), {
      // The generating instance enforced the buffer's bound already.
      items: (items) => mirror.append(items.map((item) => JSON.parse(item) as UIMessageChunk), true),
      end: () => this.drop(mirror),
    });
    this.mirrors.set(mirror, followed);
    if (await followed.answered) return mirror;
    this.drop(mirror);
    return undefined;
  }

  /** Whether the reply `remote` names is still being generated (false once it has ended, or when its instance does not answer). */
  isStreaming(remote: RemoteStream): Promise<boolean> {
    return this.relay.isRunning(remote.workspace_id, keyOf(remote.id));
  }

  /** Asks the instance generating `remote` to cancel it; true once it has ended there. */
  cancel(remote: RemoteStream): Promise<boolean> {
    return this.relay.cancel(remote.workspace_id, keyOf(remote.id));
  }

  /** Ends every mirror here (this process is stopping); their subscribers finish with what they have. */
  stopMirroring(): void {
    for (const mirror of [...this.mirrors.keys()]) this.drop(mirror);
  }

  private drop(mirror: ThreadStream): void {
    this.mirrors.get(mirror)?.leave();
    this.mirrors.delete(mirror);
    mirror.end();
    this.registry.release(mirror);
  }
}

function keyOf(streamId: string): string {
  return `thread-stream:${streamId}`;
}

/**
 * The stream's chunks (as JSON) from the first to its end, each read handing over what piled up
 * since the last. The relay's closing signal is not needed: a stream is closed only once it has ended.
 */
async function* chunksOf(stream: ThreadStream): AsyncIterable<readonly string[]> {
  let position = 0;
  for (;;) {
    const read = await stream.read(position);
    position += read.chunks.length;
    yield read.chunks;
    if (read.ended) return;
  }
}
