import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { closeSync, linkSync, mkdirSync, openSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { RunloomConfig } from '../../config';
import { type SecretBox, SecretKeyMismatchError } from '../../ports/secret-box';
import { fsyncDescriptor, syncDirectory } from './durable-file-io';

const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** Names the key a sealed value was made with, so a later key rotation can tell them apart. */
const KEY_VERSION = 'v1';
/** The key's file in the data dir when no key is given. */
export const SECRET_KEY_FILE = 'secret.key';

/**
 * AES-256-GCM with a random 96-bit nonce per seal. Sealed form:
 * `v1.<base64url(nonce | ciphertext | tag)>`. GCM's tag makes any change to it fail `open`.
 */
export class AesGcmSecretBox implements SecretBox {
  private readonly key: Buffer;

  constructor(key: Uint8Array) {
    if (key.length !== KEY_BYTES) throw new Error(`secret key must be ${KEY_BYTES} bytes, got ${key.length}`);
    this.key = Buffer.from(key);
  }

  /** Uses `config.secretKey`, else the key in `<dataDir>/secret.key` (generated on first use). */
  static async fromConfig(config: Pick<RunloomConfig, 'secretKey' | 'dataDir'>): Promise<AesGcmSecretBox> {
    return new AesGcmSecretBox(await loadSecretKey(config));
  }

  async seal(plaintext: string): Promise<string> {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `${KEY_VERSION}.${Buffer.concat([nonce, ciphertext, cipher.getAuthTag()]).toString('base64url')}`;
  }

  async open(sealed: string): Promise<string> {
    const separator = sealed.indexOf('.');
    const version = sealed.slice(0, separator);
    if (separator < 0 || version !== KEY_VERSION) throw new Error('sealed value has an unknown format or key version');
    const encoded = sealed.slice(separator + 1);
    const bytes = Buffer.from(encoded, 'base64url');
    // Node's decoder skips stray characters and ignores trailing bits; insist on the exact encoding.
    if (bytes.toString('base64url') !== encoded) throw new Error('sealed value is not valid base64url');
    if (bytes.length < NONCE_BYTES + TAG_BYTES) throw new Error('sealed value is truncated');
    const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, NONCE_BYTES));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(bytes.subarray(NONCE_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretKeyMismatchError('sealed value failed authentication: it was changed or sealed with another key');
    }
  }
}

/**
 * The instance's secret key: `config.secretKey`, else the key in `<dataDir>/secret.key` (generated
 * on first use). Encryption (`AesGcmSecretBox`) and URL signing (`HmacMessageSigner`) start from it.
 */
export async function loadSecretKey(config: Pick<RunloomConfig, 'secretKey' | 'dataDir'>): Promise<Buffer> {
  return config.secretKey !== undefined ? decodeSecretKey(config.secretKey, 'secretKey') : loadOrCreateKeyFile(config.dataDir);
}

/** Decodes a 32-byte key given as base64 (standard or url-safe alphabet), or says what is wrong. */
export function decodeSecretKey(encoded: string, source: string): Buffer {
  const text = encoded.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) {
    throw new Error(`${source} must be ${KEY_BYTES} bytes encoded as base64 (e.g. from \`openssl rand -base64 32\`); it is not base64`);
  }
  const key = Buffer.from(text, 'base64');
  if (key.length !== KEY_BYTES) {
    throw new Error(`${source} must be ${KEY_BYTES} bytes encoded as base64 (e.g. from \`openssl rand -base64 32\`); it decodes to ${key.length} bytes`);
  }
  return key;
}

/**
 * Reads `<dataDir>/secret.key`, or creates it with a fresh key. Creation is atomic and
 * first-writer-wins (a fully written temp file is hard-linked into place), so processes starting
 * together on one data dir end up with the same key and never see a partial file.
 *
 * Only the two syncs are awaited: each awaited call waits for a turn of the event loop, which the
 * rest of a start delays, and the ~18 of the promise API (a read is four) held up the start of a
 * fresh data dir; the other calls, on a 45-byte file, return at once.
 */
async function loadOrCreateKeyFile(dataDir: string): Promise<Buffer> {
  const file = path.join(dataDir, SECRET_KEY_FILE);
  const existing = readKeyFile(file);
  if (existing) return existing;
  mkdirSync(dataDir, { recursive: true });
  const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = openSync(temp, 'wx', 0o600);
  try {
    writeFileSync(fd, `${randomBytes(KEY_BYTES).toString('base64')}\n`);
    await fsyncDescriptor(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(temp, file);
    await syncDirectory(dataDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(temp);
  }
  const created = readKeyFile(file);
  if (!created) throw new Error(`${file} vanished while it was being created`);
  return created;
}

function readKeyFile(file: string): Buffer | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return decodeSecretKey(text, file);
}
