import { createHash } from 'node:crypto';
import type { ContentHasher } from '../../ports/content-hasher';

export class NodeContentHasher implements ContentHasher {
  sha256Hex(text: string): string {
    return createHash('sha256').update(text, 'utf8').digest('hex');
  }
}
