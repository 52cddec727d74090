/**
 * Signs short messages so that this instance, or any instance sharing its secret key
 * (`--secret-key`, else `<data-dir>/secret.key`), can later tell they are its own and unchanged:
 * the signed upload URLs of workspace files are the first use. Every adapter passes the contract
 * suite in `adapters/message-signer.contract.ts`.
 *
 * Each `purpose` signs with a key of its own, so a signature made for one purpose never verifies
 * for another, and none of them is the key the `SecretBox` encrypts with.
 */
export const MessageSigner = Symbol.for('runloom.MessageSigner');

export interface MessageSigner {
  /** The signature of `message` for `purpose`, printable (base64url). */
  sign(purpose: string, message: string): string;
  /** Whether `signature` is `sign(purpose, message)`; compared in constant time, never throws. */
  verify(purpose: string, message: string, signature: string): boolean;
}
