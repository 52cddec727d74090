/**
 * Encrypts secrets kept at rest (provider credentials, repository tokens). `seal` output is an
 * opaque printable string that only `open` with the same key can read; tampering makes `open` throw.
 */
export const SecretBox = Symbol.for('runloom.SecretBox');
export interface SecretBox {
  seal(plaintext: string): Promise<string>;
  open(sealed: string): Promise<string>;
}

/**
 * The key cannot open a sealed value: it was sealed with another key (or changed since). Thrown by
 * `open`, and at start when the secrets a store holds were sealed with another key than this one.
 */
export class SecretKeyMismatchError extends Error {
  override readonly name = 'SecretKeyMismatchError';
}
