import { inject, injectable } from 'inversify';
import { Database, type LivenessHold, type Migration } from '../../ports/database';
import { IdGenerator } from '../../ports/id-generator';
import { Logger } from '../../ports/logger';
import { type AccountRecord, Repository } from '../storage/repository';
import type { ThreadStream } from './thread-stream-registry';
import type { RemoteStream } from './thread-stream-relay';

const MARKERS = 'thread_stream_markers';

export const threadStreamMigrations: Migration[] = [
  { id: 'threads/002-create-stream-markers', steps: [{ createCollection: MARKERS, fields: { account_id: 'text' } }] },
];

/** A reply being streamed, in the store for as long as it streams: what other instances find it by. */
export interface StreamMarker extends AccountRecord, RemoteStream {
  /** The liveness holder of the process generating it (`Database.holdLiveness`); absent on markers of older versions. */
  holder?: string;
}

/**
 * The markers of the replies streaming in every process sharing the store. Each process holds a
 * liveness hold and names it in its markers, so a marker is an orphan (its process killed
 * mid-reply) exactly when its holder is dead: other instances leave a live process's markers alone
 * and rejoin its replies, and any of them marks an orphan's reply interrupted.
 */
@injectable()
export class ThreadStreamMarkers {
  private readonly markers: Repository<StreamMarker>;
  private hold: LivenessHold | undefined;
  private closed = false;

  constructor(
    @inject(Database) private readonly database: Database,
    @inject(IdGenerator) private readonly ids: IdGenerator,
    @inject(Logger) private readonly logger: Logger,
  ) {
    this.markers = new Repository(database, MARKERS);
  }

  /** Whether other instances read these markers (they share the store): see `ThreadStreams.reply`. */
  get shared(): boolean {
    return this.database.shared;
  }

  /** Takes this process's liveness hold: markers recorded from now on name it. */
  async open(): Promise<void> {
    this.closed = false;
    this.hold = await this.newHold();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.hold?.release();
    this.hold = undefined;
  }

  record(stream: ThreadStream): Promise<void> {
    return this.markers.insert({
      id: stream.id,
      account_id: stream.accountId,
      workspace_id: stream.workspaceId,
      thread_id: stream.threadId,
      message_id: stream.messageId,
      started_at: stream.startedAt,
      model: stream.model,
      ...(this.hold ? { holder: this.hold.holder } : {}),
    });
  }

  remove(accountId: string, streamId: string): Promise<void> {
    return this.markers.delete(accountId, streamId);
  }

  /**
   * The marker of the thread's reply when one streams in another live process: never when no
   * other process opens the store (the markers of one that died are orphans, swept at start).
   */
  async elsewhere(accountId: string, workspaceId: string, threadId: string): Promise<StreamMarker | undefined> {
    if (!this.shared) return undefined;
    const marker = (await this.markers.find(accountId)).find(
      (candidate) => candidate.workspace_id === workspaceId && candidate.thread_id === threadId && candidate.holder !== this.hold?.holder,
    );
    if (!marker?.holder) return undefined;
    return (await this.database.liveHolders([marker.holder])).has(marker.holder) ? marker : undefined;
  }

  /** Markers whose process is dead (or that name none): replies cut off mid-stream. */
  async orphans(): Promise<StreamMarker[]> {
    const others = ((await this.database.find(MARKERS)) as StreamMarker[]).filter((marker) => marker.holder !== this.hold?.holder);
    const holders = [...new Set(others.flatMap((marker) => (marker.holder ? [marker.holder] : [])))];
    const live = await this.database.liveHolders(holders);
    return others.filter((marker) => !marker.holder || !live.has(marker.holder));
  }

  private async newHold(): Promise<LivenessHold> {
    const hold = await this.database.holdLiveness(`thread-streams:${this.ids.newId()}`, (error) => void this.renew(hold, error));
    return hold;
  }

  /**
   * The hold was lost (its connection failed): others now see this process's markers as orphans.
   * A new hold is taken and the markers still here are named with it.
   */
  private async renew(lost: LivenessHold, error: Error): Promise<void> {
    if (this.closed || this.hold !== lost) return;
    this.logger.error({ holder: lost.holder, error: error.message }, 'thread streams lost their liveness hold; taking a new one');
    try {
      const hold = await this.newHold();
      this.hold = hold;
      const mine = ((await this.database.find(MARKERS)) as StreamMarker[]).filter((marker) => marker.holder === lost.holder);
      // A marker removed meanwhile (its reply ended) needs no new name.
      for (const marker of mine) await this.markers.replace({ ...marker, holder: hold.holder }, { holder: lost.holder }).catch(() => undefined);
    } catch (renewError) {
      this.logger.error({ error: (renewError as Error).message }, 'thread streams could not take a new liveness hold');
    }
  }
}
