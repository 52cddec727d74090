import type { ByteRange } from '../../ports/blob-store';

/**
 * What a `Range` header asks of content of `size` bytes (RFC 9110 §14): one range, nothing it can
 * be held to (`unsatisfiable`: answer 416), or the whole content — also for headers that are
 * malformed or ask for several ranges, which a server may ignore.
 */
export type RangeAnswer = { kind: 'whole' } | { kind: 'partial'; range: ByteRange } | { kind: 'unsatisfiable' };

const SINGLE_RANGE = /^bytes=(\d*)-(\d*)$/i;

export function parseRange(header: string | null, size: number): RangeAnswer {
  if (header === null) return { kind: 'whole' };
  const found = SINGLE_RANGE.exec(header.replace(/\s+/g, ''));
  if (!found) return { kind: 'whole' };
  const [, first = '', last = ''] = found;
  if (first === '' && last === '') return { kind: 'whole' };
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', range: { start: Math.max(0, size - suffix), end: size - 1 } };
  }
  const start = Number(first);
  if (last !== '' && Number(last) < start) return { kind: 'whole' };
  if (start >= size) return { kind: 'unsatisfiable' };
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
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
