import { strict as assert } from 'node:assert';
import type { SecretBox } from '../ports/secret-box';

/**
 * The one contract every `SecretBox` adapter passes. `createBox` returns a box with a fresh key of
 * its own on every call (two calls: two different keys).
 */
export function describeSecretBoxContract(name: string, createBox: () => Promise<SecretBox>): void {
  describe(`SecretBox contract: ${name}`, () => {
    let box: SecretBox;
    beforeEach(async () => {
      box = await createBox();
    });

    it('opens what it sealed, and the sealed form does not contain the plaintext', async () => {
      const sealed = await box.seal('sk-live-1234567890');
      assert.equal(typeof sealed, 'string');
      assert.ok(!sealed.includes('sk-live-1234567890'));
      assert.match(sealed, /^[\x21-\x7e]+$/, 'sealed form is printable');
      assert.equal(await box.open(sealed), 'sk-live-1234567890');
    });

    it('seals the same plaintext differently each time', async () => {
      const first = await box.seal('same');
      const second = await box.seal('same');
      assert.notEqual(first, second);
      assert.equal(await box.open(first), 'same');
      assert.equal(await box.open(second), 'same');
    });

    it('round-trips empty, unicode and long input', async () => {
      const long = 'x'.repeat(1_000_000);
      for (const plaintext of ['', 'héllo wörld — 秘密 🔑', long, '{"api_key":"k","nested":{"a":[1,2]}}']) {
        assert.equal(await box.open(await box.seal(plaintext)), plaintext);
      }
    });

    it('throws when any part of the sealed value is changed', async () => {
      const sealed = await box.seal('credential');
      const cut = sealed.indexOf('.') + 1;
      const bytes = Buffer.from(sealed.slice(cut), 'base64url');
      for (const index of [0, Math.floor(bytes.length / 2), bytes.length - 1]) {
        const changed = Buffer.from(bytes);
        changed[index] = changed[index]! ^ 0x01;
        await assert.rejects(box.open(sealed.slice(0, cut) + changed.toString('base64url')));
      }
      await assert.rejects(box.open(sealed.slice(0, -2)), 'truncated');
      await assert.rejects(box.open(`${sealed}A`), 'extended');
      await assert.rejects(box.open('not sealed at all'));
      await assert.rejects(box.open(''));
    });

    it('cannot open what another key sealed', async () => {
      const other = await createBox();
      await assert.rejects(other.open(await box.seal('credential')));
    });
  });
}
