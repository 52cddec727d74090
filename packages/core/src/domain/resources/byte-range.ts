import rangeParser from 'range-parser';
import type { ByteRange } from '../../ports/blob-store';

/**
 * What a `Range` header asks of content of `size` bytes (RFC 9110 §14): one range, nothing it can
 * be held to (`unsatisfiable`: answer 416), or the whole content — also for headers that are
 * malformed or ask for several ranges, which a server may ignore.
 */
export type RangeAnswer = { kind: 'whole' } | { kind: 'partial'; range: ByteRange } | { kind: 'unsatisfiable' };

const SINGLE_RANGE = /^bytes=(\d*)-(\d*)$/;

/**
 * `range-parser` reads the header; what stays ours is the policy above: only single ranges, a
 * header written with spaces or `Bytes` read as well, a backwards range (`5-2`) ignored rather than
 * unsatisfiable, a suffix longer than the content served whole, and only digits (it would read
 * `1.5` as 1).
 */
export function parseRange(header: string | null, size: number): RangeAnswer {
  if (header === null) return { kind: 'whole' };
  const compact = header.replace(/\s+/g, '').toLowerCase();
  const found = SINGLE_RANGE.exec(compact);
  if (!found) return { kind: 'whole' };
  const [, first = '', last = ''] = found;
  if (first === '' && last === '') return { kind: 'whole' };
  if (first !== '' && last !== '' && Number(last) < Number(first)) return { kind: 'whole' };
  // range-parser calls any range of empty content malformed; it is unsatisfiable (RFC 9110 §14.1.1).
  if (size === 0) return { kind: 'unsatisfiable' };
  // A suffix longer than the content asks for all of it (RFC 9110 §14.1.2); range-parser refuses it.
  const ranges = rangeParser(size, first === '' && Number(last) > size ? 'bytes=0-' : compact);
  if (ranges === -1) return { kind: 'unsatisfiable' };
  if (ranges === -2 || ranges.type !== 'bytes' || ranges.length !== 1) return { kind: 'whole' };
  const { start, end } = ranges[0]!;
  return { kind: 'partial', range: { start, end } };
}

/** The strong entity tag of content with this hash. */
export function entityTag(sha256: string): string {
  return `"${sha256}"`;
}

/** `If-None-Match` matches by weak comparison: `*`, or any listed tag equal once `W/` is dropped. */
export function noneMatch(header: string | null, etag: string): boolean {
  if (header === null) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === etag);
}

/**
 * `If-Range` keeps a Range only when it names the current content by strong comparison; a date
 * (there is no Last-Modified to compare it with) or another tag means: send the whole content.
 */
export function rangeStillApplies(ifRange: string | null, etag: string): boolean {
  return ifRange === null || ifRange.trim() === etag;
}
