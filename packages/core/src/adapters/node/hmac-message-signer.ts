import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { RunloomConfig } from '../../config';
import type { MessageSigner } from '../../ports/message-signer';
import { loadSecretKey } from './aes-gcm-secret-box';

/**
 * HMAC-SHA256 under a key derived per purpose from the instance's secret key with HKDF-SHA256
 * (RFC 5869, info `runloom/<purpose>`): the secret key itself only ever encrypts (`SecretBox`),
 * and a signature made for one purpose is worthless for another.
 */
export class HmacMessageSigner implements MessageSigner {
  private readonly keys = new Map<string, Buffer>();

  constructor(private readonly secretKey: Uint8Array) {}

  /** Keyed by `config.secretKey`, else by `<dataDir>/secret.key`, like the `SecretBox`. */
  static async fromConfig(config: Pick<RunloomConfig, 'secretKey' | 'dataDir'>): Promise<HmacMessageSigner> {
    return new HmacMessageSigner(await loadSecretKey(config));
  }

  sign(purpose: string, message: string): string {
    return createHmac('sha256', this.keyOf(purpose)).update(message, 'utf8').digest('base64url');
  }

  verify(purpose: string, message: string, signature: string): boolean {
    const expected = Buffer.from(this.sign(purpose, message), 'utf8');
    const given = Buffer.from(signature, 'utf8');
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  private keyOf(purpose: string): Buffer {
    let key = this.keys.get(purpose);
    if (!key) {
      key = Buffer.from(hkdfSync('sha256', this.secretKey, new Uint8Array(0), `runloom/${purpose}`, 32));
      this.keys.set(purpose, key);
    }
    return key;
  }
}
