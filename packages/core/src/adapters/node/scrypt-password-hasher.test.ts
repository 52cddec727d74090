import assert from 'node:assert/strict';
import { passwordHasherContract } from '../password-hasher.contract';
import { ScryptPasswordHasher } from './scrypt-password-hasher';

// The contract runs at a low cost so it stays fast; the cost itself is pinned below.
passwordHasherContract('scrypt', () => new ScryptPasswordHasher({ logN: 10, r: 8, p: 1 }));

describe('ScryptPasswordHasher', () => {
  it('hashes with N=2^15, r=8, p=1 by default and records them in the PHC string', async () => {
    const stored = await new ScryptPasswordHasher().hash('secret');
    assert.match(stored, /^\$scrypt\$ln=15,r=8,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
  });

  it('still verifies hashes made with other parameters, read from the stored string', async () => {
    const old = await new ScryptPasswordHasher({ logN: 11, r: 4, p: 2 }).hash('secret');
    const current = new ScryptPasswordHasher({ logN: 12, r: 8, p: 1 });
    assert.equal(await current.verify('secret', old), true);
    assert.equal(await current.verify('other', old), false);
  });

  it('refuses stored parameters that would allocate unbounded memory', async () => {
    const stored = await new ScryptPasswordHasher({ logN: 10, r: 8, p: 1 }).hash('secret');
    await assert.rejects(new ScryptPasswordHasher().verify('secret', stored.replace('ln=10', 'ln=30')), /out-of-range/);
  });
});
