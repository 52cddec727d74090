import { readFileSync, readlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { decodeSegment, listSegments } from './log-format';
import { readSnapshot, writeSnapshot } from './snapshot-file';
import { SqlEngine } from './sql-engine';
import { CREATE_MIGRATIONS_TABLE } from './sql-schema';

/**
 * The snapshot worker: keeps a replica of the store and, on each request, brings it up to the
 * requested record from the log segments on disk and exports it to the snapshot file. Exporting a
 * large database takes hundreds of milliseconds; here it blocks only this thread, never a request.
 * The replica reads the records from the files rather than being sent each group as it becomes
 * durable: one read and one transaction per snapshot cost far less than a message and a
 * transaction per group, on either thread.
 */
export interface SnapshotWorkerData {
  dir: string;
  wasmPath: string;
}

/** Snapshot every record up to `untilSeq`: durable, so whole in its segment on disk. */
export type SnapshotWorkerRequest = { type: 'snapshot'; untilSeq: number };
/** `bytes`: the size of the snapshot's database image. */
export type SnapshotWorkerReply = { type: 'snapshotted'; seq: number; bytes: number };

class Replica {
  private constructor(
    private readonly dir: string,
    private readonly engine: SqlEngine,
    private appliedSeq: number,
    private snapshotSeq: number,
    private snapshotBytes: number,
  ) {}

  static async load({ dir, wasmPath }: SnapshotWorkerData): Promise<Replica> {
    const snapshot = readSnapshot(dir);
    const engine = await SqlEngine.open(wasmPath, snapshot?.image);
    engine.run(CREATE_MIGRATIONS_TABLE);
    return new Replica(dir, engine, snapshot?.seq ?? 0, snapshot?.seq ?? 0, snapshot?.image.length ?? 0);
  }

  /** Applies the records after the replica's, up to `untilSeq`, from the segments holding them. */
  catchUp(untilSeq: number): void {
    const segments = listSegments(this.dir);
    for (const [index, segment] of segments.entries()) {
      if (this.appliedSeq >= untilSeq) break;
      // A segment ends where the next one starts: one wholly applied is not read at all.
      const next = segments[index + 1];
      if (next && next.startSeq - 1 <= this.appliedSeq) continue;
      const { records } = decodeSegment(readFileSync(segment.path), segment.startSeq);
      const fresh = records.filter((record) => record.seq > this.appliedSeq && record.seq <= untilSeq);
      if (fresh.length === 0) continue;
      if (fresh[0]!.seq !== this.appliedSeq + 1) throw new Error(`snapshot worker found record ${fresh[0]!.seq} after ${this.appliedSeq} in ${this.dir}`);
      this.engine.applyRecords(fresh.map((record) => record.payload));
      this.appliedSeq = fresh.at(-1)!.seq;
    }
    if (this.appliedSeq < untilSeq) throw new Error(`snapshot worker found records up to ${this.appliedSeq} in ${this.dir}, not up to ${untilSeq}`);
  }

  snapshot(untilSeq: number): SnapshotWorkerReply {
    this.catchUp(untilSeq);
    if (this.appliedSeq !== this.snapshotSeq) {
      const image = this.engine.export();
      writeSnapshot(this.dir, { seq: this.appliedSeq, image });
      this.snapshotSeq = this.appliedSeq;
      this.snapshotBytes = image.length;
    }
    return { type: 'snapshotted', seq: this.snapshotSeq, bytes: this.snapshotBytes };
  }
}

/**
 * Snapshots are background work: where niceness is per thread (Linux), let request handling on
 * the main thread have the CPU first. Elsewhere the thread keeps the default priority.
 */
function yieldCpuToRequests(): void {
  try {
    const threadId = Number(path.basename(readlinkSync('/proc/thread-self')));
    if (Number.isInteger(threadId)) os.setPriority(threadId, 10);
  } catch {
    // No /proc/thread-self (not Linux) or not permitted: share the CPU evenly.
  }
}

async function serve(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('snapshot-worker runs as a worker thread');
  yieldCpuToRequests();
  // Requests that arrive while the replica loads wait here, in order.
  const waiting: SnapshotWorkerRequest[] = [];
  let handle = (request: SnapshotWorkerRequest): void => {
    waiting.push(request);
  };
  port.on('message', (request: SnapshotWorkerRequest) => handle(request));
  const replica = await Replica.load(workerData as SnapshotWorkerData);
  handle = (request) => {
    port.postMessage(replica.snapshot(request.untilSeq));
  };
  for (const request of waiting.splice(0)) handle(request);
}

serve().catch((error: unknown) => {
  // Surfaces as the worker's 'error' event in the main thread, which restarts it on the next snapshot.
  setImmediate(() => {
    throw error;
  });
});
