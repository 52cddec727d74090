import { randomBytes } from 'node:crypto';

/**
 * Keys of the blob stores: `ab/cd/<sha256>-<16 hex>`, derived from the content and sharded by its
 * hash prefix, with a random tail so every put gets a key of its own (ports/blob-store.ts).
 */
export function newBlobKey(sha256: string): string {
  return `${sha256.slice(0, 2)}/${sha256.slice(2, 4)}/${sha256}-${randomBytes(8).toString('hex')}`;
}

/** Whether `key` has the shape `newBlobKey` gives; a store refuses others, so no key leaves its root. */
export function isBlobKey(key: string): boolean {
  return /^[0-9a-f]{2}\/[0-9a-f]{2}\/[0-9a-f]{64}-[0-9a-f]{16}$/.test(key);
}
