import { strict as assert } from 'node:assert';
import type { ContentHasher } from '../ports/content-hasher';

/** The behaviour every `ContentHasher` adapter must have; each adapter's test file runs it. */
export function contentHasherContract(name: string, createHasher: () => ContentHasher): void {
  describe(`ContentHasher contract: ${name}`, () => {
    it('gives the SHA-256 of the UTF-8 bytes as lower-case hex (FIPS 180-2 vectors)', () => {
      const hasher = createHasher();
      assert.equal(hasher.sha256Hex(''), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
      assert.equal(hasher.sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    });

    it('hashes non-ASCII text by its UTF-8 encoding, as WebCrypto over TextEncoder does', async () => {
      const hasher = createHasher();
      const text = `ünïcode ✓ 𝄞 ${'x'.repeat(10_000)}`;
      const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
      assert.equal(hasher.sha256Hex(text), Buffer.from(digest).toString('hex'));
    });
  });
}
