import type { Principal } from '../../http/route';

interface Entry {
  principal: Principal;
  expiresAtMs: number;
}

/**
 * Tokens already verified, so the hot path skips signature checking (50–100 µs with jose). Bounded
 * (least recently used entries go first) and never answers for a token at or past its `exp`.
 */
export class VerifiedTokenCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly maxEntries: number) {}

  get(token: string, nowMs: number): Principal | undefined {
    const entry = this.entries.get(token);
    if (!entry) return undefined;
    this.entries.delete(token);
    if (nowMs >= entry.expiresAtMs) return undefined;
    // Re-inserting moves the entry to the end of the Map's order: the most recently used.
    this.entries.set(token, entry);
    return entry.principal;
  }

  set(token: string, principal: Principal, expiresAtMs: number): void {
    this.entries.delete(token);
    this.entries.set(token, { principal, expiresAtMs });
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}
