import { closeSync, existsSync, fdatasyncSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { isMissing } from '../node/durable-file-io';
import { fsyncDirectory } from './log-format';

/**
 * The snapshot: a database image plus the sequence number of the last log record it contains.
 *
 *   "RLSNAP01" | u64 LE sequence | u64 LE image length | u32 LE crc32 of image | 4 zero bytes | image
 *
 * It is replaced atomically (temp file, fsync, rename, directory fsync), so there is always one
 * complete snapshot or none.
 */
export const SNAPSHOT_FILE = 'snapshot.db';
const MAGIC = 'RLSNAP01';
const HEADER_BYTES = 32;
/** Written in pieces with a data sync after each, so the log's fsyncs never queue behind one huge flush. */
const WRITE_CHUNK_BYTES = 4 * 1024 * 1024;

export interface Snapshot {
  seq: number;
  image: Uint8Array;
}

export function snapshotTempPath(dir: string): string {
  return path.join(dir, `${SNAPSHOT_FILE}.tmp`);
}

export function writeSnapshot(dir: string, { seq, image }: Snapshot): void {
  const header = Buffer.alloc(HEADER_BYTES);
  header.write(MAGIC, 0, 'latin1');
  writeUInt64(header, seq, 8);
  writeUInt64(header, image.length, 16);
  header.writeUInt32LE(crc32(image), 24);
  const temp = snapshotTempPath(dir);
  const fd = openSync(temp, 'w');
  try {
    writeSync(fd, header);
    for (let offset = 0; offset < image.length; offset += WRITE_CHUNK_BYTES) {
      const chunk = image.subarray(offset, Math.min(offset + WRITE_CHUNK_BYTES, image.length));
      for (let written = 0; written < chunk.length; ) written += writeSync(fd, chunk, written);
      fdatasyncSync(fd);
    }
    fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, path.join(dir, SNAPSHOT_FILE));
  fsyncDirectory(dir);
}

/** The snapshot in `dir`, or undefined when there is none yet. Throws when it is damaged. */
export function readSnapshot(dir: string): Snapshot | undefined {
  const file = path.join(dir, SNAPSHOT_FILE);
  if (!existsSync(file)) return undefined;
  const data = readFileSync(file);
  const damaged = (why: string): Error => new Error(`snapshot ${file} is damaged (${why}); restore it from a backup`);
  if (data.length < HEADER_BYTES || data.toString('latin1', 0, 8) !== MAGIC) throw damaged('not a Runloom snapshot');
  const seq = readUInt64(data, 8);
  const length = readUInt64(data, 16);
  if (data.length !== HEADER_BYTES + length) throw damaged(`${data.length - HEADER_BYTES} image bytes where ${length} were written`);
  const image = data.subarray(HEADER_BYTES);
  if (crc32(image) !== data.readUInt32LE(24)) throw damaged('checksum mismatch');
  return { seq, image };
}

/** Size of the snapshot's database image, from the file's size without reading it; 0 when there is none. */
export function snapshotImageBytes(dir: string): number {
  const file = path.join(dir, SNAPSHOT_FILE);
  return existsSync(file) ? Math.max(0, statSync(file).size - HEADER_BYTES) : 0;
}

/** Removes a snapshot a crash left half-written. `unlinkSync`, not `rmSync`: Node 20 loads a module of its own for `rmSync`'s first call. */
export function removeSnapshotTemp(dir: string): void {
  try {
    unlinkSync(snapshotTempPath(dir));
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
}

function writeUInt64(buffer: Buffer, value: number, offset: number): void {
  buffer.writeUInt32LE(value % 0x1_0000_0000, offset);
  buffer.writeUInt32LE(Math.floor(value / 0x1_0000_0000), offset + 4);
}

function readUInt64(buffer: Buffer, offset: number): number {
  return buffer.readUInt32LE(offset) + buffer.readUInt32LE(offset + 4) * 0x1_0000_0000;
}
