import { randomBytes } from 'node:crypto';
import type { IdGenerator } from '../../ports/id-generator';

/**
 * RFC 9562 UUID v7: 48-bit Unix milliseconds, then random bits. Within one millisecond the
 * 12-bit `rand_a` field counts up, so ids made by one process sort in creation order.
 */
export class UuidV7Generator implements IdGenerator {
  private lastMs = 0;
  private counter = 0;

  newId(): string {
    let ms = Date.now();
    if (ms <= this.lastMs) {
      ms = this.lastMs;
      this.counter += 1;
      if (this.counter > 0xfff) {
        ms += 1;
        this.counter = 0;
      }
    } else {
      this.counter = randomBytes(2).readUInt16BE(0) & 0x7ff;
    }
    this.lastMs = ms;
    const bytes = randomBytes(16);
    bytes.writeUIntBE(ms, 0, 6);
    bytes[6] = 0x70 | ((this.counter >> 8) & 0x0f);
    bytes[7] = this.counter & 0xff;
    bytes[8] = 0x80 | (bytes[8]! & 0x3f);
    const hex = bytes.toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
}
