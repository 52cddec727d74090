import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../ports/logger';
import type { OperationLog } from './operation-log';
import { snapshotImageBytes } from './snapshot-file';
import type { SnapshotWorkerData, SnapshotWorkerReply, SnapshotWorkerRequest } from './snapshot-worker';

/**
 * Log closed since the last snapshot past which the next one is taken whatever the store's size:
 * bounds the log an open replays.
 */
const MAX_LOG_BYTES_BETWEEN_SNAPSHOTS = 128 * 1024 * 1024;

/**
 * Main-thread side of snapshots. When log segments closed since the last snapshot hold as many
 * bytes as that snapshot (at least one segment, at most MAX_LOG_BYTES_BETWEEN_SNAPSHOTS), or on
 * request, the snapshot worker brings its replica up to the last durable record, read from the
 * segments on disk, and writes a snapshot; the segments the snapshot covers are then deleted.
 * Waiting for as much log as the snapshot holds keeps the bytes snapshots write at most about
 * those the log writes, however large the store grows (a snapshot per segment rewrote the whole
 * store every 16 MB). The worker starts with the first snapshot, so a store whose log never fills
 * a segment never pays for a replica.
 */
export class Snapshotter {
  private worker: Worker | undefined;
  private reply: { resolve(reply: SnapshotWorkerReply): void; reject(error: Error): void } | undefined;
  /** Bytes of the segments closed since the last snapshot started. */
  private logBytesSinceSnapshot = 0;
  /** Size of the last snapshot's database image. */
  private snapshotBytes: number;
  private running: Promise<void> = Promise.resolve();
  private queued: Promise<void> | undefined;
  private stopping = false;

  constructor(
    private readonly options: { dir: string; wasmPath: string; logger: Logger },
    private readonly log: OperationLog,
    /** Sequence number of the last record in the snapshot on disk (0: none). */
    private snapshotSeq: number,
  ) {
    this.snapshotBytes = snapshotImageBytes(options.dir);
    log.onSegmentClosed = (_lastSeq, bytes) => {
      this.logBytesSinceSnapshot += bytes;
      if (this.logBytesSinceSnapshot < Math.min(this.snapshotBytes, MAX_LOG_BYTES_BETWEEN_SNAPSHOTS)) return;
      this.snapshot().catch((error: unknown) => {
        options.logger.error({ error: String(error) }, 'snapshot failed; the operation log keeps every record meanwhile');
      });
    };
  }

  /** Whether a replica is up (a snapshot then costs no log replay). */
  get replicaRunning(): boolean {
    return this.worker !== undefined;
  }

  get lastSnapshotSeq(): number {
    return this.snapshotSeq;
  }

  /**
   * Snapshots everything durable when it starts, then deletes the segments it covers. A request
   * made while one is waiting to start joins that one.
   */
  snapshot(): Promise<void> {
    if (!this.queued) {
      const queued = this.running
        .catch(() => {})
        .then(() => {
          this.queued = undefined;
          return this.takeSnapshot();
        });
      this.queued = queued;
      this.running = queued;
    }
    return this.queued;
  }

  /** Waits for a snapshot in progress and stops the worker. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.running.catch(() => {});
    await this.worker?.terminate();
    this.worker = undefined;
  }

  private async takeSnapshot(): Promise<void> {
    if (this.stopping || this.log.durableSeq <= this.snapshotSeq) return;
    const worker = this.startedWorker();
    // Held while a snapshot is in flight, so the process does not exit halfway through one.
    worker.ref();
    // Segments closing from now on count towards the next snapshot.
    this.logBytesSinceSnapshot = 0;
    const { seq, bytes } = await new Promise<SnapshotWorkerReply>((resolve, reject) => {
      this.reply = { resolve, reject };
      const request: SnapshotWorkerRequest = { type: 'snapshot', untilSeq: this.log.durableSeq };
      worker.postMessage(request);
    }).finally(() => worker.unref());
    this.snapshotSeq = seq;
    this.snapshotBytes = bytes;
    await this.log.removeSegmentsCoveredBy(seq);
  }

  private startedWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = spawnSnapshotWorker({ dir: this.options.dir, wasmPath: this.options.wasmPath });
    // A host that forgets close() should still be able to exit.
    worker.unref();
    worker.on('message', (message: SnapshotWorkerReply) => {
      this.reply?.resolve(message);
      this.reply = undefined;
    });
    worker.on('error', (error) => this.workerGone(worker, error));
    worker.on('exit', (code) => this.workerGone(worker, new Error(`snapshot worker exited with code ${code}`)));
    this.worker = worker;
    return worker;
  }

  private workerGone(worker: Worker, error: Error): void {
    if (this.worker !== worker) return;
    // The next snapshot starts a new worker, which rebuilds its replica from the files.
    this.worker = undefined;
    this.reply?.reject(error);
    this.reply = undefined;
    if (!this.stopping) this.options.logger.error({ error: error.message }, 'snapshot worker stopped');
  }
}

/** The bundled worker next to this bundle (esbuild.mjs builds it), else the TypeScript source through tsx. */
function spawnSnapshotWorker(workerData: SnapshotWorkerData): Worker {
  const bundled = path.join(__dirname, 'sqljs-snapshot-worker.js');
  if (existsSync(bundled)) return new Worker(bundled, { workerData });
  const source = path.join(__dirname, 'snapshot-worker.ts');
  const tsx = createRequire(__filename).resolve('tsx/cjs');
  const loader = `require(${JSON.stringify(tsx)}); require(${JSON.stringify(source)});`;
  return new Worker(loader, { eval: true, workerData });
}
