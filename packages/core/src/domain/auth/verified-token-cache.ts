import type { LRUCache } from 'lru-cache';
import type { Principal } from './principal';
import { lazyLruCache } from '../lazy';

interface Entry {
  principal: Principal;
  expiresAtMs: number;
}

/**
 * Tokens already verified, so the hot path skips signature checking (50–100 µs with jose). Bounded
 * (least recently used entries go first) and never answers for a token at or past its `exp`.
 */
export class VerifiedTokenCache {
  private readonly entries: () => LRUCache<string, Entry>;
  /**
   * The token answered last, held beside the LRU: a client sends the same token request after
   * request, and matching it is one string comparison, where a map lookup hashes the whole token
   * (a few hundred characters, in a new string each request) first.
   */
  private last: { token: string; entry: Entry } | undefined;

  constructor(maxEntries: number) {
    // Expiry is checked against the injected clock below, not lru-cache's own TTL timer.
    this.entries = lazyLruCache({ max: maxEntries });
  }

  get(token: string, nowMs: number): Principal | undefined {
    const last = this.last;
    const entry = last !== undefined && last.token === token ? last.entry : this.entries().get(token);
    if (!entry) return undefined;
    if (nowMs < entry.expiresAtMs) {
      if (entry !== last?.entry) this.last = { token, entry };
      return entry.principal;
    }
    this.entries().delete(token);
    this.last = undefined;
    return undefined;
  }

  set(token: string, principal: Principal, expiresAtMs: number): void {
    if (this.last?.token === token) this.last = undefined;
    this.entries().set(token, { principal, expiresAtMs });
  }

  get size(): number {
    return this.entries().size;
  }
}
