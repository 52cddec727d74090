import type { LRUCache } from 'lru-cache';
import { lazyLruCache } from '../lazy';

/** Characters kept at most by one `VersionedTexts` (texts past it are computed each time). */
const KEPT_CHARS = 8 * 1024 * 1024;

/**
 * Texts computed from reads of one collection, each kept by key under the collection version it
 * was read at (`Repository.collectionVersion`) and answered again while the version stays there,
 * when the store would answer the same. Any write to the collection moves the version and so ends
 * every kept text; a store shared with other processes (PostgreSQL) gives no version, and then
 * nothing is kept. Least recently used texts go first past `maxEntries` or 8 M characters.
 */
export class VersionedTexts {
  private readonly kept: () => LRUCache<string, { version: number; text: string }>;

  constructor(maxEntries?: number) {
    this.kept = lazyLruCache({ max: maxEntries, maxSize: KEPT_CHARS, sizeCalculation: (entry, key) => entry.text.length + key.length });
  }

  /**
   * The text kept under `key` at `version`, else `compute`'s, kept under `version` (an undefined
   * text is not kept). `version` must be read before anything `compute` reads: a write landing
   * meanwhile moves it, so what is kept under the older version is never answered.
   */
  keptUnder(key: string, version: number | undefined, compute: () => Promise<string>): Promise<string>;
  keptUnder(key: string, version: number | undefined, compute: () => Promise<string | undefined>): Promise<string | undefined>;
  async keptUnder(key: string, version: number | undefined, compute: () => Promise<string | undefined>): Promise<string | undefined> {
    if (version === undefined) return compute();
    const kept = this.kept().get(key);
    if (kept !== undefined && kept.version === version) return kept.text;
    const text = await compute();
    if (text !== undefined) this.kept().set(key, { version, text });
    return text;
  }
}
