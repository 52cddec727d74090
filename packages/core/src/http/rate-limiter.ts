/**
 * Per-account token bucket: `ratePerSecond` tokens refill each second, bursts up to twice that.
 * A rate of 0 turns limiting off.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; updatedAt: number }>();

  constructor(
    private readonly ratePerSecond: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Takes one token for `key`; returns 0 when allowed, else the seconds to wait (Retry-After). */
  take(key: string): number {
    if (this.ratePerSecond <= 0) return 0;
    const capacity = this.ratePerSecond * 2;
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: capacity, updatedAt: now };
    // A wall clock may step back: that refills nothing rather than taking tokens away.
    bucket.tokens = Math.min(capacity, bucket.tokens + (Math.max(0, now - bucket.updatedAt) / 1000) * this.ratePerSecond);
    bucket.updatedAt = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.ratePerSecond));
  }
}
