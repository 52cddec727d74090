import { closeSync, fdatasync, fsyncSync, ftruncateSync, openSync, readFileSync, rmSync, statSync, writevSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../ports/logger';
import { syncDirectory } from '../node/durable-file-io';
import { decodeSegment, encodeFrame, encodeRecord, listSegments, type Segment, segmentPath } from './log-format';
import type { LoggedStatement } from './sql-engine';

export interface RecoveredLog {
  log: OperationLog;
  /** Records past the snapshot, in order, already handed to `apply`. */
  replayed: number;
}

interface Waiter {
  resolve(): void;
  reject(error: Error): void;
}

interface Pending extends Waiter {
  frame: Buffer;
  seq: number;
}

/** A group of records written to the segment whose fdatasync has not returned yet. */
type SyncingGroup = Pending[];

/**
 * fdatasyncs allowed in flight at once. A second one lets the next group go to disk while the
 * first is still syncing, so neither the disk nor the main thread waits for the other; more
 * would crowd the thread pool other I/O shares.
 */
const MAX_SYNCS_IN_FLIGHT = 2;

/**
 * The append-only operation log, written by the main thread. Appends are group-committed: the
 * records appended during one turn of the event loop are written together and acknowledged by
 * one fdatasync. Writes go to the file in order on the main thread; since an fdatasync makes
 * durable everything written before it started, groups are acknowledged strictly in order. A
 * segment past `segmentBytes` is closed and a new one started; the snapshotter later removes
 * segments a snapshot covers.
 */
export class OperationLog {
  /** Called after a segment is closed, with the last sequence number and the bytes it holds. */
  onSegmentClosed: (lastSeq: number, bytes: number) => void = () => {};

  /** Appended, not yet written. */
  private queue: Pending[] = [];
  /** Written, waiting for their fdatasync, oldest first. */
  private syncing: SyncingGroup[] = [];
  private issueScheduled = false;
  private rollWaiters: Waiter[] = [];
  /** A roll is due: nothing more is written to this segment until it is closed. */
  private draining = false;
  private rolling = false;
  private idleWaiters: (() => void)[] = [];
  private failure: Error | undefined;
  private closed = false;

  private constructor(
    private readonly dir: string,
    private readonly segmentBytes: number,
    private readonly segments: Segment[],
    /** The active segment, opened for appending. */
    private fd: number,
    private activeBytes: number,
    private lastSeq: number,
    private durable: number,
    /** The directory sync made at open, until it has succeeded. */
    private directorySync: Promise<void> | undefined,
  ) {
    directorySync?.then(
      () => (this.directorySync = undefined),
      (error: unknown) => this.fail(error, []),
    );
  }

  /**
   * Opens the log in `dir`: hands every intact record after `snapshotSeq` to `apply` (one call per
   * segment), cuts off a torn or damaged tail (logging what was dropped), removes segments the
   * snapshot covers, and opens the last segment for appending.
   */
  static async open(options: {
    dir: string;
    snapshotSeq: number;
    segmentBytes: number;
    logger: Logger;
    apply(payloads: Buffer[]): void;
  }): Promise<RecoveredLog> {
    const { dir, snapshotSeq, logger } = options;
    const segments = listSegments(dir);
    const kept: Segment[] = [];
    let covered = snapshotSeq;
    let replayed = 0;
    let activeBytes = 0;
    for (const [index, segment] of segments.entries()) {
      if (segment.startSeq > covered + 1) {
        throw new Error(`operation log in ${dir} is missing records ${covered + 1} to ${segment.startSeq - 1}; restore it from a backup`);
      }
      const data = readFileSync(segment.path);
      const decoded = decodeSegment(data, segment.startSeq);
      if (decoded.damage !== undefined) {
        const later = segments.slice(index + 1);
        if (later.some((next) => statSync(next.path).size > 0)) {
          throw new Error(
            `operation log segment ${segment.path} is damaged at byte ${decoded.validBytes} (${decoded.damage}) and later segments hold records; restore it from a backup`,
          );
        }
        truncateDurably(segment.path, decoded.validBytes);
        for (const next of later) rmSync(next.path);
        segments.length = index + 1;
        logger.warn(
          { segment: path.basename(segment.path), offset: decoded.validBytes, droppedBytes: data.length - decoded.validBytes, damage: decoded.damage },
          'cut a torn or damaged tail off the operation log; every record before it is kept',
        );
      }
      const fresh = decoded.records.filter((record) => record.seq > covered);
      options.apply(fresh.map((record) => record.payload));
      replayed += fresh.length;
      const endSeq = segment.startSeq + decoded.records.length - 1;
      covered = Math.max(covered, endSeq);
      if (endSeq > snapshotSeq) {
        kept.push(segment);
        activeBytes = decoded.validBytes;
      } else {
        rmSync(segment.path);
      }
    }
    if (kept.length === 0) {
      kept.push({ startSeq: covered + 1, path: segmentPath(dir, covered + 1) });
      activeBytes = 0;
    }
    const active = kept.at(-1)!;
    const fd = openSync(active.path, 'a');
    // The active segment's name made durable while the store opens (not blocking the thread at
    // start); no append is acknowledged before it is (see `synced`).
    const log = new OperationLog(dir, options.segmentBytes, kept, fd, activeBytes, covered, covered, syncDirectory(dir));
    return { log, replayed };
  }

  /** Sequence number of the last record known to be on disk. */
  get durableSeq(): number {
    return this.durable;
  }

  /** Set once a write to the log failed: the store must refuse writes until reopened. */
  get error(): Error | undefined {
    return this.failure;
  }

  /** Appends one record, the statements of one write; resolves once it is on disk. */
  append(statements: readonly LoggedStatement[]): Promise<void> {
    const unavailable = this.unavailable();
    if (unavailable) return Promise.reject(unavailable);
    this.lastSeq += 1;
    const seq = this.lastSeq;
    return new Promise((resolve, reject) => {
      this.queue.push({ frame: encodeFrame(seq, encodeRecord(statements)), seq, resolve, reject });
      this.scheduleIssue();
    });
  }

  /** Closes the current segment (when it holds records) once what it holds is durable. */
  roll(): Promise<void> {
    const unavailable = this.unavailable();
    if (unavailable) return Promise.reject(unavailable);
    return new Promise((resolve, reject) => {
      this.rollWaiters.push({ resolve, reject });
      this.scheduleIssue();
    });
  }

  /** Resolves once everything appended so far is durable (or has failed). */
  flush(): Promise<void> {
    if (this.idle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Deletes the closed segments whose every record is at or below `seq` (a snapshot holds them). */
  async removeSegmentsCoveredBy(seq: number): Promise<void> {
    const removable: Segment[] = [];
    while (this.segments.length > 1 && this.segments[1]!.startSeq - 1 <= seq) removable.push(this.segments.shift()!);
    for (const segment of removable) await rm(segment.path, { force: true });
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
    closeSync(this.fd);
  }

  private unavailable(): Error | undefined {
    if (this.failure) return this.failure;
    if (this.closed) return new Error('the store is closed');
    return undefined;
  }

  private idle(): boolean {
    if (this.failure) return true;
    return !this.issueScheduled && !this.rolling && this.queue.length === 0 && this.syncing.length === 0 && this.rollWaiters.length === 0;
  }

  /** Writers that arrive in the same turn of the event loop share one write and one fdatasync. */
  private scheduleIssue(): void {
    if (this.issueScheduled) return;
    this.issueScheduled = true;
    setImmediate(() => {
      this.issueScheduled = false;
      this.issue();
    });
  }

  /** Writes the queued group when an fdatasync slot is free, and rolls the segment when due. */
  private issue(): void {
    if (this.failure || this.rolling) return;
    if (this.rollWaiters.length > 0 || this.activeBytes >= this.segmentBytes) this.draining = true;
    if (!this.draining && this.queue.length > 0 && this.syncing.length < MAX_SYNCS_IN_FLIGHT) this.writeQueued();
    if (this.draining && this.syncing.length === 0) void this.rollSegment();
    this.notifyIfIdle();
  }

  private writeQueued(): void {
    const group = this.queue;
    this.queue = [];
    const frames = group.map((entry) => entry.frame);
    const bytes = frames.reduce((total, frame) => total + frame.length, 0);
    try {
      // Appending to the page cache is a copy: doing it here costs less than a thread-pool round
      // trip, and keeps the groups in order in the file. Only the fdatasync waits for the disk.
      const written = writevSync(this.fd, frames);
      if (written !== bytes) throw new Error(`wrote ${written} of ${bytes} bytes (is the disk full?)`);
    } catch (error) {
      this.fail(error, group);
      return;
    }
    this.activeBytes += bytes;
    this.syncing.push(group);
    fdatasync(this.fd, (error) => {
      const opening = this.directorySync;
      if (error || !opening) this.synced(group, error);
      else opening.then(() => this.synced(group, null), () => undefined);
    });
  }

  private synced(group: SyncingGroup, error: Error | null): void {
    if (this.failure) return;
    if (error) {
      this.fail(error, []);
      return;
    }
    // This fdatasync covered every byte written before it started: its group and all older ones.
    const index = this.syncing.indexOf(group);
    if (index >= 0) {
      const durable = this.syncing.splice(0, index + 1).flat();
      this.durable = durable.at(-1)!.seq;
      for (const entry of durable) entry.resolve();
    }
    this.issue();
  }

  private async rollSegment(): Promise<void> {
    this.rolling = true;
    const waiters = this.rollWaiters;
    this.rollWaiters = [];
    try {
      if (this.activeBytes > 0) {
        // Nothing is syncing: every record written to this segment is durable.
        const closedLastSeq = this.durable;
        closeSync(this.fd);
        const segment = { startSeq: closedLastSeq + 1, path: segmentPath(this.dir, closedLastSeq + 1) };
        this.fd = openSync(segment.path, 'a');
        await syncDirectory(this.dir);
        this.segments.push(segment);
        const closedBytes = this.activeBytes;
        this.activeBytes = 0;
        this.onSegmentClosed(closedLastSeq, closedBytes);
      }
    } catch (error) {
      this.rolling = false;
      this.fail(error, waiters);
      return;
    }
    this.rolling = false;
    this.draining = false;
    for (const waiter of waiters) waiter.resolve();
    this.issue();
  }

  private fail(cause: unknown, waiting: Waiter[]): void {
    const reason = cause instanceof Error ? cause.message : String(cause);
    this.failure = new Error(`writing the operation log failed (${reason}); the store refuses writes until it is reopened`, { cause });
    for (const waiter of [...waiting, ...this.syncing.flat(), ...this.queue, ...this.rollWaiters]) waiter.reject(this.failure);
    this.syncing = [];
    this.queue = [];
    this.rollWaiters = [];
    this.notifyIfIdle();
  }

  private notifyIfIdle(): void {
    if (!this.idle()) return;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}

function truncateDurably(file: string, length: number): void {
  const fd = openSync(file, 'r+');
  try {
    ftruncateSync(fd, length);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
