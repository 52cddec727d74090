/**
 * `make()`'s value, made on the first call and kept: for what a module would otherwise make at load
 * (zod schemas) though only some requests use it. A `make` that throws is called again by the next
 * caller, so each gets its error.
 */
export function lazy<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}
