import { closeSync, fsyncSync, openSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { crc32 } from 'node:zlib';

/**
 * On-disk format of the operation log. The log is a series of segment files
 * `log-<first sequence number, 20 digits>.oplog`; each holds consecutive frames:
 *
 *   u32 LE payload length | u32 LE crc32 of (sequence + payload) | u64 LE sequence | payload
 *
 * A payload is one committed write: a UTF-8 JSON array of logged statements.
 */
export const FRAME_HEADER_BYTES = 16;

/** No single write is anywhere near this; a larger length field is damage, not data. */
const MAX_PAYLOAD_BYTES = 1 << 30;

const SEGMENT_PATTERN = /^log-(\d{20})\.oplog$/;

export interface LogRecord {
  seq: number;
  payload: string;
}

export interface Segment {
  /** Sequence number of the first record the segment holds (or would hold when empty). */
  startSeq: number;
  path: string;
}

export function segmentPath(dir: string, startSeq: number): string {
  return path.join(dir, `log-${String(startSeq).padStart(20, '0')}.oplog`);
}

/** The log segments in `dir`, oldest first. */
export function listSegments(dir: string): Segment[] {
  return readdirSync(dir)
    .map((name) => SEGMENT_PATTERN.exec(name))
    .filter((match) => match !== null)
    .map((match) => ({ startSeq: Number(match[1]), path: path.join(dir, match[0]) }))
    .sort((a, b) => a.startSeq - b.startSeq);
}

export function encodeFrame(seq: number, payload: string): Buffer {
  const length = Buffer.byteLength(payload);
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + length);
  frame.writeUInt32LE(length, 0);
  frame.writeUInt32LE(seq % 0x1_0000_0000, 8);
  frame.writeUInt32LE(Math.floor(seq / 0x1_0000_0000), 12);
  frame.write(payload, FRAME_HEADER_BYTES, 'utf8');
  frame.writeUInt32LE(crc32(frame.subarray(8)), 4);
  return frame;
}

export interface DecodedSegment {
  records: LogRecord[];
  /** Bytes from the start that hold whole, intact frames. */
  validBytes: number;
  /** Why decoding stopped before the end of the data, if it did. */
  damage?: string;
}

/**
 * Reads the frames of one segment, which must number consecutively from `startSeq`. Stops at the
 * first frame that is partial, fails its checksum or is out of sequence.
 */
export function decodeSegment(data: Buffer, startSeq: number): DecodedSegment {
  const records: LogRecord[] = [];
  let offset = 0;
  let expectedSeq = startSeq;
  while (offset < data.length) {
    if (data.length - offset < FRAME_HEADER_BYTES) return { records, validBytes: offset, damage: 'partial frame header' };
    const length = data.readUInt32LE(offset);
    if (length === 0 || length > MAX_PAYLOAD_BYTES) return { records, validBytes: offset, damage: `bad frame length ${length}` };
    const end = offset + FRAME_HEADER_BYTES + length;
    if (end > data.length) return { records, validBytes: offset, damage: 'partial frame' };
    if (crc32(data.subarray(offset + 8, end)) !== data.readUInt32LE(offset + 4)) {
      return { records, validBytes: offset, damage: 'checksum mismatch' };
    }
    const seq = data.readUInt32LE(offset + 8) + data.readUInt32LE(offset + 12) * 0x1_0000_0000;
    if (seq !== expectedSeq) return { records, validBytes: offset, damage: `sequence ${seq} where ${expectedSeq} was due` };
    records.push({ seq, payload: data.toString('utf8', offset + FRAME_HEADER_BYTES, end) });
    expectedSeq += 1;
    offset = end;
  }
  return { records, validBytes: offset };
}

/** Makes creations, renames and deletions in `dir` durable. */
export function fsyncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
