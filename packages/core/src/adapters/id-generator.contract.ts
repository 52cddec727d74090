import { strict as assert } from 'node:assert';
import type { IdGenerator } from '../ports/id-generator';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The behaviour every `IdGenerator` adapter must have; each adapter's test file runs it. */
export function idGeneratorContract(name: string, createGenerator: () => IdGenerator): void {
  describe(`IdGenerator contract: ${name}`, () => {
    it('makes RFC 9562 version 7 ids, unique and in creation order', () => {
      const generator = createGenerator();
      const before = Date.now();
      const ids = Array.from({ length: 5000 }, () => generator.newId());
      for (const id of ids) assert.match(id, UUID_V7);
      assert.equal(new Set(ids).size, ids.length);
      assert.deepEqual([...ids].sort(), ids);
      const ms = parseInt(ids[0]!.replace(/-/g, '').slice(0, 12), 16);
      assert.ok(ms >= before && ms <= Date.now(), 'the first 48 bits are the creation time in ms');
    });

    it('draws different random bits for each id made in the same millisecond', () => {
      const generator = createGenerator();
      const tails = new Set(Array.from({ length: 1000 }, () => generator.newId().slice(19)));
      assert.equal(tails.size, 1000);
    });
  });
}
