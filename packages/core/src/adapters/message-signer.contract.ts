import { strict as assert } from 'node:assert';
import type { MessageSigner } from '../ports/message-signer';

/**
 * The behaviour every `MessageSigner` adapter must have; each adapter's test file runs it.
 * `create(key)` makes a signer on a 32-byte secret key: signers on the same key agree, others not.
 */
export function messageSignerContract(name: string, create: (key: Uint8Array) => MessageSigner | Promise<MessageSigner>): void {
  describe(`MessageSigner contract: ${name}`, () => {
    const key = new Uint8Array(32).fill(7);

    it('verifies its own signatures, also from another signer on the same key (another instance)', async () => {
      const signer = await create(key);
      const signature = signer.sign('upload', 'workspace w, path a.txt');
      assert.match(signature, /^[A-Za-z0-9_-]+$/);
      assert.equal(signer.verify('upload', 'workspace w, path a.txt', signature), true);
      assert.equal((await create(key)).verify('upload', 'workspace w, path a.txt', signature), true);
    });

    it('refuses a changed message, a changed signature, another purpose and another key', async () => {
      const signer = await create(key);
      const signature = signer.sign('upload', 'size=10');
      assert.equal(signer.verify('upload', 'size=11', signature), false);
      const flipped = (signature[0] === 'A' ? 'B' : 'A') + signature.slice(1);
      assert.equal(signer.verify('upload', 'size=10', flipped), false);
      assert.equal(signer.verify('download', 'size=10', signature), false);
      assert.equal((await create(new Uint8Array(32).fill(8))).verify('upload', 'size=10', signature), false);
    });

    it('answers false, never throws, for signatures of any shape', async () => {
      const signer = await create(key);
      for (const bad of ['', 'x', '=====', 'é', 'a'.repeat(10_000), '\u0000']) assert.equal(signer.verify('upload', 'm', bad), false);
    });
  });
}
