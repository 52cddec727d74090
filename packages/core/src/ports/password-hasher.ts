/**
 * Slow salted hashing of client secrets. `hash` output is a self-describing string (algorithm,
 * cost parameters, salt, digest), so the parameters can be raised later while older hashes still
 * verify. `verify` compares in constant time.
 */
export const PasswordHasher = Symbol.for('runloom.PasswordHasher');
export interface PasswordHasher {
  hash(secret: string): Promise<string>;
  /** Whether `secret` matches `stored` (an output of `hash`); throws if `stored` is not one. */
  verify(secret: string, stored: string): Promise<boolean>;
}
