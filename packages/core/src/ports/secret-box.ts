/**
 * Encrypts secrets kept at rest (provider credentials, repository tokens). `seal` output is an
 * opaque printable string that only `open` with the same key can read; tampering makes `open` throw.
 */
export const SecretBox = Symbol.for('runloom.SecretBox');
export interface SecretBox {
  seal(plaintext: string): Promise<string>;
  open(sealed: string): Promise<string>;
}
