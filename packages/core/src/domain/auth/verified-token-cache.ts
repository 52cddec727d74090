import { LRUCache } from 'lru-cache';
import type { Principal } from './principal';

interface Entry {
  principal: Principal;
  expiresAtMs: number;
}

/**
 * Tokens already verified, so the hot path skips signature checking (50–100 µs with jose). Bounded
 * (least recently used entries go first) and never answers for a token at or past its `exp`.
 */
export class VerifiedTokenCache {
  private readonly entries: LRUCache<string, Entry>;

  constructor(maxEntries: number) {
    // Expiry is checked against the injected clock below, not lru-cache's own TTL timer.
    this.entries = new LRUCache({ max: maxEntries });
  }

  get(token: string, nowMs: number): Principal | undefined {
    const entry = this.entries.get(token);
    if (!entry) return undefined;
    if (nowMs < entry.expiresAtMs) return entry.principal;
    this.entries.delete(token);
    return undefined;
  }

  set(token: string, principal: Principal, expiresAtMs: number): void {
    this.entries.set(token, { principal, expiresAtMs });
  }

  get size(): number {
    return this.entries.size;
  }
}
