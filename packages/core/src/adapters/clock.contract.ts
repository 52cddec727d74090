import assert from 'node:assert/strict';
import type { Clock } from '../ports/clock';

/** The behaviour every `Clock` adapter must have; each adapter's test file runs it. */
export function clockContract(name: string, createClock: () => Clock): void {
  describe(`Clock contract: ${name}`, () => {
    it('answers a fresh, valid Date each call, so callers may keep or change it', () => {
      const clock = createClock();
      const first = clock.now();
      assert.ok(first instanceof Date && !Number.isNaN(first.getTime()));
      first.setTime(0);
      assert.notEqual(clock.now().getTime(), 0);
    });

    it('never goes backwards between calls', () => {
      const clock = createClock();
      let previous = clock.now().getTime();
      for (let index = 0; index < 1000; index += 1) {
        const current = clock.now().getTime();
        assert.ok(current >= previous);
        previous = current;
      }
    });
  });
}
