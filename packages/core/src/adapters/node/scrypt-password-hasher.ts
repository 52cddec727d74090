import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import type { PasswordHasher } from '../../ports/password-hasher';

export interface ScryptParameters {
  /** log2 of the CPU/memory cost N. */
  logN: number;
  r: number;
  p: number;
}

/**
 * 2^15 × 8 × 128 bytes = 32 MiB and ~100 ms per hash on one core: slow enough to make guessing a
 * weak bootstrap secret expensive, cheap enough that the token endpoint stays usable.
 */
const DEFAULT_PARAMETERS: ScryptParameters = { logN: 15, r: 8, p: 1 };
const SALT_BYTES = 16;
const DIGEST_BYTES = 32;
/** Refuse stored parameters beyond these: a tampered hash must not make us allocate gigabytes. */
const MAX_LOG_N = 20;
const MAX_R = 32;
const MAX_P = 16;

const PHC = /^\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

/**
 * scrypt from `node:crypto` (run on the libuv thread pool, so hashing never blocks the event
 * loop). Hashes are PHC strings: `$scrypt$ln=15,r=8,p=1$<salt>$<digest>` (unpadded base64).
 */
export class ScryptPasswordHasher implements PasswordHasher {
  constructor(private readonly parameters: ScryptParameters = DEFAULT_PARAMETERS) {}

  async hash(secret: string): Promise<string> {
    const salt = randomBytes(SALT_BYTES);
    const digest = await derive(secret, salt, DIGEST_BYTES, this.parameters);
    const { logN, r, p } = this.parameters;
    return `$scrypt$ln=${logN},r=${r},p=${p}$${unpadded(salt)}$${unpadded(digest)}`;
  }

  async verify(secret: string, stored: string): Promise<boolean> {
    const match = PHC.exec(stored);
    if (!match) throw new Error('stored secret hash is not a scrypt PHC string');
    const parameters = { logN: Number(match[1]), r: Number(match[2]), p: Number(match[3]) };
    if (parameters.logN < 1 || parameters.logN > MAX_LOG_N || parameters.r < 1 || parameters.r > MAX_R || parameters.p < 1 || parameters.p > MAX_P) {
      throw new Error('stored secret hash has out-of-range scrypt parameters');
    }
    const salt = Buffer.from(match[4]!, 'base64');
    const expected = Buffer.from(match[5]!, 'base64');
    const actual = await derive(secret, salt, expected.length, parameters);
    return timingSafeEqual(actual, expected);
  }
}

function derive(secret: string, salt: Buffer, length: number, { logN, r, p }: ScryptParameters): Promise<Buffer> {
  const N = 2 ** logN;
  return new Promise((resolve, reject) => {
    // scrypt needs 128·N·r bytes; the default `maxmem` (32 MiB) is exactly the default cost, too tight.
    scrypt(secret.normalize('NFC'), salt, length, { N, r, p, maxmem: 256 * N * r }, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

function unpadded(bytes: Buffer): string {
  return bytes.toString('base64').replace(/=+$/, '');
}
