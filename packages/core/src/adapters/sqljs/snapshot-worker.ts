import { readFileSync, readlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { decodeSegment, listSegments, type LogRecord } from './log-format';
import { readSnapshot, writeSnapshot } from './snapshot-file';
import { SqlEngine } from './sql-engine';
import { CREATE_MIGRATIONS_TABLE } from './sql-schema';

/**
 * The snapshot worker: keeps a replica of the store, fed with the same durable log records as the
 * main thread applied, and exports it to the snapshot file on request. Exporting a large database
 * takes hundreds of milliseconds; here it blocks only this thread, never a request.
 */
export interface SnapshotWorkerData {
  dir: string;
  wasmPath: string;
  /** The replica starts from the snapshot plus the log on disk up to this sequence number. */
  untilSeq: number;
}

export type SnapshotWorkerRequest = { type: 'records'; records: LogRecord[] } | { type: 'snapshot' };
export type SnapshotWorkerReply = { type: 'snapshotted'; seq: number };

class Replica {
  private constructor(
    private readonly dir: string,
    private readonly engine: SqlEngine,
    private appliedSeq: number,
    private snapshotSeq: number,
  ) {}

  static async load({ dir, wasmPath, untilSeq }: SnapshotWorkerData): Promise<Replica> {
    const snapshot = readSnapshot(dir);
    const engine = await SqlEngine.open(wasmPath, snapshot?.image);
    engine.run(CREATE_MIGRATIONS_TABLE);
    const replica = new Replica(dir, engine, snapshot?.seq ?? 0, snapshot?.seq ?? 0);
    for (const segment of listSegments(dir)) {
      if (replica.appliedSeq >= untilSeq) break;
      const { records } = decodeSegment(readFileSync(segment.path), segment.startSeq);
      replica.apply(records.filter((record) => record.seq > replica.appliedSeq && record.seq <= untilSeq));
    }
    if (replica.appliedSeq !== untilSeq) {
      throw new Error(`snapshot worker found records up to ${replica.appliedSeq} in ${dir}, not up to ${untilSeq}`);
    }
    return replica;
  }

  apply(records: LogRecord[]): void {
    const fresh = records.filter((record) => record.seq > this.appliedSeq);
    if (fresh.length === 0) return;
    if (fresh[0]!.seq !== this.appliedSeq + 1) {
      throw new Error(`snapshot worker got record ${fresh[0]!.seq} after ${this.appliedSeq}`);
    }
    this.engine.applyRecords(fresh.map((record) => record.payload));
    this.appliedSeq = fresh.at(-1)!.seq;
  }

  snapshot(): number {
    if (this.appliedSeq !== this.snapshotSeq) {
      writeSnapshot(this.dir, { seq: this.appliedSeq, image: this.engine.export() });
      this.snapshotSeq = this.appliedSeq;
    }
    return this.snapshotSeq;
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
    if (request.type === 'records') {
      replica.apply(request.records);
    } else {
      port.postMessage({ type: 'snapshotted', seq: replica.snapshot() } satisfies SnapshotWorkerReply);
    }
  };
  for (const request of waiting.splice(0)) handle(request);
}

serve().catch((error: unknown) => {
  // Surfaces as the worker's 'error' event in the main thread, which restarts it on the next snapshot.
  setImmediate(() => {
    throw error;
  });
});
