import { createHash, randomBytes } from 'node:crypto';
import { type FileHandle, mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { type BlobStat, BlobNotFoundError, type BlobStore, BlobTooLargeError, type ByteRange, type StoredBlob } from '../../ports/blob-store';
import { isBlobKey, newBlobKey } from '../blob-keys';
import { fileReadStream, isMissing, syncDirectory, writeStreamToFile } from './durable-file-io';

/** Temporary files older than this at start belong to uploads that a crash cut off. */
const STALE_TEMP_MS = 60 * 60 * 1000;

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
      size = await writeStreamToFile(content, handle, { maxBytes, tooLarge: () => new BlobTooLargeError(maxBytes), onChunk: (chunk) => hash.update(chunk) });
      await handle.sync();
    } catch (error) {
      await handle.close();
      await rm(tempPath, { force: true });
      throw error;
    }
    await handle.close();
    const sha256 = hash.digest('hex');
    const key = newBlobKey(sha256);
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
    let end: number;
    try {
      end = range ? range.end + 1 : (await handle.stat()).size;
    } catch (error) {
      await handle.close();
      throw error;
    }
    return fileReadStream(handle, range?.start ?? 0, end);
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
    if (!isBlobKey(key)) throw new BlobNotFoundError(key);
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
