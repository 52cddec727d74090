import { LRUCache } from 'lru-cache';

/**
 * `make()`'s value, made on the first call and kept: for what a module would otherwise make at load
 * (zod schemas) though only some requests use it. A `make` that throws is called again by the next
 * caller, so each gets its error.
 */
export function lazy<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}

/**
 * An LRUCache of `options`, made on its first use: lru-cache allocates every one of its `max`
 * slots when it is made, and the caches a server makes at start (~30,000 slots in all) are mostly
 * not used before it listens.
 */
export function lazyLruCache<K extends NonNullable<unknown>, V extends NonNullable<unknown>>(options: LRUCache.Options<K, V, unknown>): () => LRUCache<K, V> {
  return lazy(() => new LRUCache<K, V>(options));
}
