import { close, fsync, open } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';

/**
 * The file plumbing the disk adapters share (`LocalDiskBlobStore`, `NodeWorkspaceFileSystem`):
 * streaming a web stream into a file under a size limit, a file (or a range of it) as a web stream
 * read on demand, and the directory fsync that makes a rename durable.
 */

/** Bytes gathered before one `writev`; the next batch is read while this one is written. */
const WRITE_BATCH_BYTES = 1024 * 1024;
/** Bytes per chunk of a read stream. */
const READ_CHUNK_BYTES = 256 * 1024;

export interface StreamToFileOptions {
  /** Past this many bytes the source is cancelled and `tooLarge()` is thrown. */
  maxBytes: number;
  tooLarge: () => Error;
  /** Sees every chunk before it is written (a hash, say). */
  onChunk?: (chunk: Uint8Array) => void;
}

/**
 * Copies `content` to `handle` and returns the byte count. Writes go out in batches, each
 * overlapping the reading of the next; past `maxBytes` it cancels the source instead of reading it
 * to its end.
 */
export async function writeStreamToFile(content: ReadableStream<Uint8Array>, handle: FileHandle, { maxBytes, tooLarge, onChunk }: StreamToFileOptions): Promise<number> {
  const reader = content.getReader();
  let size = 0;
  let batch: Uint8Array[] = [];
  let batchBytes = 0;
  let writing: Promise<unknown> = Promise.resolve();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw tooLarge();
      }
      onChunk?.(value);
      batch.push(value);
      batchBytes += value.byteLength;
      if (batchBytes >= WRITE_BATCH_BYTES) {
        await writing;
        writing = writeAll(handle, batch, batchBytes);
        batch = [];
        batchBytes = 0;
      }
    }
    await writing;
    if (batch.length > 0) await writeAll(handle, batch, batchBytes);
    return size;
  } catch (error) {
    // A failed read must not leave a write rejection unobserved, nor close the file under it.
    await writing.catch(() => undefined);
    throw error;
  } finally {
    reader.releaseLock();
  }
}

export async function writeAll(handle: FileHandle, chunks: Uint8Array[], bytes: number): Promise<void> {
  const { bytesWritten } = await handle.writev(chunks);
  // Files take whole writes unless the disk is full; a short one would corrupt the file silently.
  if (bytesWritten !== bytes) throw new Error(`short write: ${bytesWritten} of ${bytes} bytes (disk full?)`);
}

/**
 * The first `size` bytes of `handle` (its size when opened: `readFile` of a handle stops there
 * too), fewer if it ends sooner; one read call unless the kernel answers a part. `start`: its
 * first bytes, already read.
 */
export async function readBytesOf(handle: FileHandle, size: number, start?: Uint8Array): Promise<Uint8Array> {
  const bytes = new Uint8Array(size);
  let total = 0;
  if (start) {
    bytes.set(start);
    total = start.byteLength;
  }
  while (total < size) {
    const { bytesRead } = await handle.read(bytes, total, size - total, total);
    if (bytesRead === 0) break;
    total += bytesRead;
  }
  return total === size ? bytes : bytes.subarray(0, total);
}

/**
 * The bytes of `handle` from `start` up to `end` (exclusive) as a web stream that reads a chunk
 * only when the consumer pulls (backpressure), and closes the handle when done or cancelled.
 */
export function fileReadStream(handle: FileHandle, start: number, end: number): ReadableStream<Uint8Array> {
  let position = start;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const length = Math.min(READ_CHUNK_BYTES, end - position);
          const chunk = length > 0 ? Buffer.allocUnsafeSlow(length) : undefined;
          const { bytesRead } = chunk ? await handle.read(chunk, 0, length, position) : { bytesRead: 0 };
          if (!chunk || bytesRead === 0) {
            await handle.close();
            controller.close();
            return;
          }
          position += bytesRead;
          controller.enqueue(bytesRead === length ? chunk : chunk.subarray(0, bytesRead));
        } catch (error) {
          await handle.close().catch(() => undefined);
          controller.error(error);
        }
      },
      async cancel() {
        await handle.close();
      },
    },
    { highWaterMark: 2 },
  );
}

/**
 * A directory's sync in flight, and the one that starts when it ends, if anyone asked meanwhile.
 * Until its fsync is asked for (`phase` 'opening' the directory, or 'waiting' for `changes`), that
 * fsync covers the changes of whoever calls meanwhile.
 */
interface DirectorySyncs {
  running: Promise<void>;
  phase: 'opening' | 'waiting' | 'syncing';
  /** Changes under way that the running sync's fsync waits for: added to while it opens the directory. */
  changes: Promise<void>[];
  queued?: { done: Promise<void>; changes: Promise<void>[]; start(): void };
}

const directorySyncs = new Map<string, DirectorySyncs>();

/**
 * Makes the renames (and creations, deletions) done in `directory` durable: those done so far, and
 * `change` when given, a change still under way that the fsync then waits for (the directory is
 * opened meanwhile, so its opening costs the caller no wait). Group commit: a call while the
 * directory's sync has not asked for its fsync yet shares that sync; a call once it has cannot
 * count on it (it may have started before the caller's change), so it joins the sync queued to
 * start when that one ends, which every caller meanwhile shares: concurrent writes to one directory
 * pay about one fsync between them instead of one each, queued behind each other. A failed
 * `change` is its caller's to report; the sync goes on for the others. Windows cannot open a
 * directory for syncing; its renames are journaled.
 */
export function syncDirectory(directory: string, change?: Promise<unknown>): Promise<void> {
  if (process.platform === 'win32') return Promise.resolve();
  return joinDirectorySync(directory, change?.then(ignore, ignore));
}

function ignore(): void {}

/** `syncDirectory`, with `change` settling as the caller's change does, never rejecting: its failure is the caller's. */
function joinDirectorySync(directory: string, change: Promise<void> | undefined): Promise<void> {
  const syncs = directorySyncs.get(directory);
  if (!syncs) return startDirectorySync(directory, change ? [change] : []);
  // Once opened, the sync waits only for the changes it has: one still under way goes to the next.
  if (syncs.phase === 'opening' || (syncs.phase === 'waiting' && !change)) {
    if (change) syncs.changes.push(change);
    return syncs.running;
  }
  if (!syncs.queued) {
    let start!: () => void;
    const changes: Promise<void>[] = [];
    const done = new Promise<void>((resolve, reject) => {
      start = () => startDirectorySync(directory, changes).then(resolve, reject);
    });
    syncs.queued = { done, changes, start };
  }
  if (change) syncs.queued.changes.push(change);
  return syncs.queued.done;
}

function startDirectorySync(directory: string, changes: Promise<void>[]): Promise<void> {
  const syncs: DirectorySyncs = {
    running: fsyncDirectory(directory, changes, {
      opened: () => (syncs.phase = 'waiting'),
      syncing: () => (syncs.phase = 'syncing'),
    }),
    phase: 'opening',
    changes,
  };
  directorySyncs.set(directory, syncs);
  const ended = (): void => {
    if (directorySyncs.get(directory) !== syncs) return;
    if (syncs.queued) syncs.queued.start();
    else directorySyncs.delete(directory);
  };
  syncs.running.then(ended, ended);
  return syncs.running;
}

/**
 * Opens `directory`, waits for `changes` (callers add to them until it is open) to settle, fsyncs
 * and closes it; `opened` and `syncing` are called as it gets there. Done once the fsync is: the
 * close runs after.
 */
async function fsyncDirectory(directory: string, changes: Promise<void>[], steps: { opened(): void; syncing(): void }): Promise<void> {
  const fd = await openDirectory(directory);
  steps.opened();
  if (changes.length > 0) await Promise.all(changes);
  steps.syncing();
  try {
    await fsyncDescriptor(fd);
  } finally {
    // The sync is what callers wait for; a read-only descriptor's close has nothing left to fail.
    close(fd, () => undefined);
  }
}

/**
 * A read-only descriptor of `directory`, through node:fs's callbacks rather than node:fs/promises: a
 * start fsyncs the data dir, and node:fs/promises (a FileHandle's machinery, with node:readline for
 * its `readLines`) is otherwise loaded only by requests that stream files.
 */
function openDirectory(directory: string): Promise<number> {
  return new Promise((resolve, reject) => open(directory, 'r', (error, fd) => (error ? reject(error) : resolve(fd))));
}

/** fsync of an open descriptor, through node:fs's callback (see `openDirectory` for why not a FileHandle). */
export function fsyncDescriptor(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fsync(fd, (error) => (error ? reject(error) : resolve())));
}

export function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

export function isMissing(error: unknown): boolean {
  return errorCode(error) === 'ENOENT';
}
