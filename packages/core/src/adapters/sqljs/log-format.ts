import { closeSync, fsyncSync, openSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import type { LoggedStatement, StatementParam } from './sql-engine';

/**
 * On-disk format of the operation log. The log is a series of segment files
 * `log-<first sequence number, 20 digits>.oplog`; each holds consecutive frames:
 *
 *   u32 LE payload length | u32 LE crc32 of (sequence + payload) | u64 LE sequence | payload
 *
 * A payload is one committed write, its logged statements (see `encodeRecord`).
 */
export const FRAME_HEADER_BYTES = 16;

/**
 * First byte of a payload in the current record format. Stores written before it hold payloads
 * that are a UTF-8 JSON array (first byte `[`), which `decodeRecord` still reads.
 */
const RECORD_FORMAT_MARK = 0x01;
const JSON_ARRAY_START = 0x5b;
const RECORD_PREFIX_BYTES = 5;

/** No single write is anywhere near this; a larger length field is damage, not data. */
const MAX_PAYLOAD_BYTES = 1 << 30;

const SEGMENT_PATTERN = /^log-(\d{20})\.oplog$/;

export interface LogRecord {
  seq: number;
  /** A view into the segment's data. */
  payload: Buffer;
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

/** The frame of record `seq` whose payload is `parts`, one after another. */
export function encodeFrame(seq: number, parts: readonly Uint8Array[]): Buffer {
  let length = 0;
  for (const part of parts) length += part.length;
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + length);
  frame.writeUInt32LE(length, 0);
  frame.writeUInt32LE(seq % 0x1_0000_0000, 8);
  frame.writeUInt32LE(Math.floor(seq / 0x1_0000_0000), 12);
  let offset = FRAME_HEADER_BYTES;
  for (const part of parts) {
    frame.set(part, offset);
    offset += part.length;
  }
  frame.writeUInt32LE(crc32(frame.subarray(8)), 4);
  return frame;
}

/**
 * The payload of one committed write, as parts to write one after another:
 *
 *   0x01 | u32 LE header length | header | bytes of each bytes parameter, in order
 *
 * The header is UTF-8 JSON, one `[sql, params, bytesAt]` per statement: `bytesAt` lists the
 * parameters given as bytes (the documents, already UTF-8 for SQLite), each logged as its length
 * in `params` and its bytes after the header. A document is thus logged as it is stored, not
 * escaped into a JSON string, and replay binds it straight from the segment.
 */
export function encodeRecord(statements: readonly LoggedStatement[]): Uint8Array[] {
  const tail: Uint8Array[] = [];
  const header = statements.map(([sql, params]) => {
    const bytesAt: number[] = [];
    const logged = params.map((param, index) => {
      if (!(param instanceof Uint8Array)) return param;
      bytesAt.push(index);
      tail.push(param);
      return param.length;
    });
    return bytesAt.length === 0 ? [sql, logged] : [sql, logged, bytesAt];
  });
  const text = JSON.stringify(header);
  const head = Buffer.allocUnsafe(RECORD_PREFIX_BYTES + Buffer.byteLength(text));
  head[0] = RECORD_FORMAT_MARK;
  head.writeUInt32LE(head.length - RECORD_PREFIX_BYTES, 1);
  head.write(text, RECORD_PREFIX_BYTES, 'utf8');
  return [head, ...tail];
}

/** The statements of a payload, in either format; bytes parameters are views into `payload`. */
export function decodeRecord(payload: Buffer): LoggedStatement[] {
  if (payload[0] === JSON_ARRAY_START) return JSON.parse(payload.toString('utf8')) as LoggedStatement[];
  if (payload[0] !== RECORD_FORMAT_MARK || payload.length < RECORD_PREFIX_BYTES) throw new Error(`unknown operation log record format ${payload[0]}`);
  let offset = RECORD_PREFIX_BYTES + payload.readUInt32LE(1);
  const header = JSON.parse(payload.toString('utf8', RECORD_PREFIX_BYTES, offset)) as [string, StatementParam[], number[]?][];
  const statements = header.map(([sql, params, bytesAt = []]): LoggedStatement => {
    for (const index of bytesAt) {
      const length = params[index] as number;
      params[index] = payload.subarray(offset, offset + length);
      offset += length;
    }
    return [sql, params];
  });
  if (offset !== payload.length) throw new Error(`operation log record holds ${payload.length} bytes where its header accounts for ${offset}`);
  return statements;
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
    records.push({ seq, payload: data.subarray(offset + FRAME_HEADER_BYTES, end) });
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
