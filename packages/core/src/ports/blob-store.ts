/**
 * The `BlobStore` port: where resource bytes live (local disk by default, S3-compatible storage
 * when several instances share the work). Every adapter passes the contract suite in
 * `adapters/blob-store.contract.ts`.
 *
 * Guarantees an adapter gives:
 * - `put` hashes the bytes while it streams them and never buffers the whole body. When it
 *   resolves, the blob is durable and complete under the returned key; until then nothing is
 *   visible under that key. Past `maxBytes` it rejects with `BlobTooLargeError` and keeps nothing.
 * - Keys are derived from the content (they start from its sha256) and are never reused: every
 *   `put` returns a key of its own, so deleting a key can never remove bytes that another `put`
 *   stored. Sharing identical content between records is the caller's job (resources count
 *   references in the database and delete a duplicate's key at once), which keeps every adapter a
 *   plain store.
 * - `delete` of a missing key succeeds (deletes are retried after crashes).
 */
export const BlobStore = Symbol.for('runloom.BlobStore');

export interface StoredBlob {
  /** Where the bytes are, within `bucket`. */
  key: string;
  /** Lowercase hex SHA-256 of the bytes. */
  sha256: string;
  size: number;
  /** Storage system or bucket name ('local' for the local-disk adapter). */
  bucket: string;
}

/** Inclusive byte offsets, both within the blob (`0 <= start <= end < size`). */
export interface ByteRange {
  start: number;
  end: number;
}

export interface BlobStat {
  key: string;
  size: number;
}

export interface BlobStore {
  put(content: ReadableStream<Uint8Array>, options: { maxBytes: number }): Promise<StoredBlob>;
  /** The blob's bytes, or the `range` of them; rejects with `BlobNotFoundError` for a missing key. */
  get(key: string, range?: ByteRange): Promise<ReadableStream<Uint8Array>>;
  /** Undefined for a missing key. */
  stat(key: string): Promise<BlobStat | undefined>;
  delete(key: string): Promise<void>;
}

/** `put` read more than `maxBytes`; nothing was kept. */
export class BlobTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`the content is over the limit of ${maxBytes} bytes`);
    this.name = 'BlobTooLargeError';
  }
}

/**
 * The store failed to do what was asked (unreachable, refused this server's credentials, …): a
 * fault of the deployment, not of the request. The message names the operation and the store's
 * answer, never a credential.
 */
export class BlobStoreError extends Error {
  override readonly name: string = 'BlobStoreError';
}

export class BlobNotFoundError extends Error {
  constructor(readonly key: string) {
    super(`no blob under key ${key}`);
    this.name = 'BlobNotFoundError';
  }
}
