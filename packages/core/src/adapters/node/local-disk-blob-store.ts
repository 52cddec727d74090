import { createHash, randomBytes } from 'node:crypto';
import { type FileHandle, mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { type BlobStat, BlobNotFoundError, type BlobStore, BlobTooLargeError, type ByteRange, type StoredBlob } from '../../ports/blob-store';

/** Bytes gathered before one `writev`; the next batch is read while this one is written. */
const WRITE_BATCH_BYTES = 1024 * 1024;
/** Bytes per chunk of a download stream. */
const READ_CHUNK_BYTES = 256 * 1024;
/** Temporary files older than this at start belong to uploads that a crash cut off. */
const STALE_TEMP_MS = 60 * 60 * 1000;
const KEY = /^[0-9a-f]{2}\/[0-9a-f]{2}\/[0-9a-f]{64}-[0-9a-f]{16}$/;

/**
 * Blobs as files under `root` (`<dataDir>/blobs`), sharded by hash prefix:
 * `ab/cd/<sha256>-<random>`. A put streams into `root/tmp`, fsyncs, renames into place and fsyncs
 * the directory, so a blob is either complete and durable or not visible at all.
 */
export class LocalDiskBlobStore implements BlobStore {
  private readonly tempDir: string;
  private ready: Promise<void> | undefined;

  constructor(private readonly root: string) {
    this.tempDir = path.join(root, 'tmp');
  }

  async put(content: ReadableStream<Uint8Array>, { maxBytes }: { maxBytes: number }): Promise<StoredBlob> {
    await this.prepare();
    const tempPath = path.join(this.tempDir, randomBytes(16).toString('hex'));
    const handle = await open(tempPath, 'wx');
    const hash = createHash('sha256');
    let size = 0;
    try {
      size = await writeHashed(content, handle, hash, maxBytes);
      await handle.sync();
    } catch (error) {
      await handle.close();
      await rm(tempPath, { force: true });
      throw error;
    }
    await handle.close();
    const sha256 = hash.digest('hex');
    const key = `${sha256.slice(0, 2)}/${sha256.slice(2, 4)}/${sha256}-${randomBytes(8).toString('hex')}`;
    const finalPath = this.pathOf(key);
    try {
      await mkdir(path.dirname(finalPath), { recursive: true });
      await rename(tempPath, finalPath);
      await syncDirectory(path.dirname(finalPath));
    } catch (error) {
      await rm(tempPath, { force: true });
      throw error;
    }
    return { key, sha256, size, bucket: 'local' };
  }

  async get(key: string, range?: ByteRange): Promise<ReadableStream<Uint8Array>> {
    let handle: FileHandle;
    try {
      handle = await open(this.pathOf(key), 'r');
    } catch (error) {
      if (isMissing(error)) throw new BlobNotFoundError(key);
      throw error;
    }
    let position = range?.start ?? 0;
    let end: number;
    try {
      end = range ? range.end + 1 : (await handle.stat()).size;
    } catch (error) {
      await handle.close();
      throw error;
    }
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

  async stat(key: string): Promise<BlobStat | undefined> {
    try {
      return { key, size: (await stat(this.pathOf(key))).size };
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  /** Keys come from `put`; checking their shape keeps every path inside `root`. */
  private pathOf(key: string): string {
    if (!KEY.test(key)) throw new BlobNotFoundError(key);
    return path.join(this.root, key);
  }

  private prepare(): Promise<void> {
    this.ready ??= (async () => {
      await mkdir(this.tempDir, { recursive: true });
      const cutoff = Date.now() - STALE_TEMP_MS;
      for (const name of await readdir(this.tempDir)) {
        const tempPath = path.join(this.tempDir, name);
        const info = await stat(tempPath).catch(() => undefined);
        if (info && info.mtimeMs < cutoff) await rm(tempPath, { force: true });
      }
    })();
    return this.ready;
  }
}

/**
 * Copies `content` to `handle` while hashing it, and returns the byte count. Writes go out in
 * batches, each overlapping the reading of the next; past `maxBytes` it cancels the source.
 */
async function writeHashed(
  content: ReadableStream<Uint8Array>,
  handle: FileHandle,
  hash: ReturnType<typeof createHash>,
  maxBytes: number,
): Promise<number> {
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
        throw new BlobTooLargeError(maxBytes);
      }
      hash.update(value);
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

async function writeAll(handle: FileHandle, chunks: Uint8Array[], bytes: number): Promise<void> {
  const { bytesWritten } = await handle.writev(chunks);
  // Files take whole writes unless the disk is full; a short one would corrupt the blob silently.
  if (bytesWritten !== bytes) throw new Error(`short write: ${bytesWritten} of ${bytes} bytes (disk full?)`);
}

/** Makes a rename durable. Windows cannot open a directory for syncing; its renames are journaled. */
async function syncDirectory(directory: string): Promise<void> {
  if (process.platform === 'win32') return;
  const handle = await open(directory, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT';
}
