import { strict as assert } from 'node:assert';
import type { PasswordHasher } from '../ports/password-hasher';

/** The behaviour every `PasswordHasher` adapter must have; each adapter's test file runs it. */
export function passwordHasherContract(name: string, createHasher: () => PasswordHasher): void {
  describe(`PasswordHasher contract: ${name}`, () => {
    let hasher: PasswordHasher;
    beforeEach(() => {
      hasher = createHasher();
    });

    it('verifies the secret it hashed and refuses any other', async () => {
      const stored = await hasher.hash('s3cret-value');
      assert.equal(await hasher.verify('s3cret-value', stored), true);
      assert.equal(await hasher.verify('s3cret-valuE', stored), false);
      assert.equal(await hasher.verify('', stored), false);
    });

    it('salts: the same secret hashes differently each time, and the hash does not contain it', async () => {
      const first = await hasher.hash('same-secret');
      const second = await hasher.hash('same-secret');
      assert.notEqual(first, second);
      assert.ok(!first.includes('same-secret'));
      assert.equal(await hasher.verify('same-secret', second), true);
    });

    it('handles non-ASCII and long secrets', async () => {
      const secret = `pässwörd-✓-${'x'.repeat(500)}`;
      const stored = await hasher.hash(secret);
      assert.equal(await hasher.verify(secret, stored), true);
      assert.equal(await hasher.verify(secret.slice(0, -1), stored), false);
    });

    it('throws on a stored value that is not one of its hashes', async () => {
      await assert.rejects(hasher.verify('secret', 'secret'));
      await assert.rejects(hasher.verify('secret', ''));
    });
  });
}
