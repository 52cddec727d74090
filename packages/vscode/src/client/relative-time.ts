const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 24 * 3600_000],
  ['month', 30 * 24 * 3600_000],
  ['week', 7 * 24 * 3600_000],
  ['day', 24 * 3600_000],
  ['hour', 3600_000],
  ['minute', 60_000],
];

/**
 * How long ago `then` was, as the editor's own lists say it ("just now", "5 minutes ago",
 * "yesterday"): a thread's last change in the Threads view.
 */
export function timeAgo(then: Date, now: Date, locale?: string): string {
  const elapsed = now.getTime() - then.getTime();
  const format = new Intl.RelativeTimeFormat(locale, { numeric: 'auto' });
  for (const [unit, size] of UNITS) {
    if (Math.abs(elapsed) >= size) return format.format(-Math.round(elapsed / size), unit);
  }
  return 'just now';
}
