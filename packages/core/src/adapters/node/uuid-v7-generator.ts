import { randomBytes } from 'node:crypto';
import type { IdGenerator } from '../../ports/id-generator';

/** Random bytes are drawn from the system a block at a time: one call per 200-odd ids, not two per id. */
const RANDOM_BLOCK_BYTES = 4096;

/**
 * RFC 9562 UUID v7: 48-bit Unix milliseconds, then random bits. Within one millisecond the
 * 12-bit `rand_a` field counts up, so ids made by one process sort in creation order.
 */
export class UuidV7Generator implements IdGenerator {
  private lastMs = 0;
  private counter = 0;
  private random = Buffer.alloc(0);
  private randomOffset = 0;

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
      this.counter = this.randomBytes(2).readUInt16BE(0) & 0x7ff;
    }
    this.lastMs = ms;
    const bytes = this.randomBytes(16);
    bytes.writeUIntBE(ms, 0, 6);
    bytes[6] = 0x70 | ((this.counter >> 8) & 0x0f);
    bytes[7] = this.counter & 0xff;
    bytes[8] = 0x80 | (bytes[8]! & 0x3f);
    const hex = bytes.toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  /** `count` unused random bytes, the caller's to overwrite. */
  private randomBytes(count: number): Buffer {
    if (this.randomOffset + count > this.random.length) {
      this.random = randomBytes(RANDOM_BLOCK_BYTES);
      this.randomOffset = 0;
    }
    const bytes = this.random.subarray(this.randomOffset, this.randomOffset + count);
    this.randomOffset += count;
    return bytes;
  }
}
