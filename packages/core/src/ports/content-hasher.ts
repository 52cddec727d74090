/**
 * Digests of content, synchronous: a WebCrypto digest is asynchronous and costs about 100 µs for a
 * short text (a thread-pool job and two promise turns), a fifth of creating a runnable.
 */
export const ContentHasher = Symbol.for('runloom.ContentHasher');
export interface ContentHasher {
  /** SHA-256 of the text's UTF-8 bytes, as 64 lower-case hex digits. */
  sha256Hex(text: string): string;
}
