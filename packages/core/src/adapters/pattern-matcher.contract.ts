import { strict as assert } from 'node:assert';
import { InvalidPatternError, type PatternMatcher, PatternTimeoutError } from '../ports/pattern-matcher';

/** The one contract every `PatternMatcher` adapter passes. */
export function describePatternMatcherContract(name: string, create: () => PatternMatcher): void {
  describe(`PatternMatcher contract: ${name}`, () => {
    let matcher: PatternMatcher;
    beforeEach(() => {
      matcher = create();
    });

    it('answers the first match with its index, or null', async () => {
      assert.deepEqual(await matcher.match('P(a)ris', 'The capital is Paris.'), { match: { text: 'Paris', index: 15 } });
      assert.deepEqual(await matcher.match('^Paris$', 'The capital is Paris.'), { match: null });
      assert.deepEqual(await matcher.match('paris', 'PARIS', { flags: 'i' }), { match: { text: 'PARIS', index: 0 } });
    });

    it('throws InvalidPatternError for a pattern that does not compile', async () => {
      await assert.rejects(async () => matcher.match('(unclosed', 'x'), InvalidPatternError);
      await assert.rejects(async () => matcher.match('a', 'x', { flags: 'q' }), InvalidPatternError);
    });

    it('stops a catastrophically backtracking pattern at the bound and keeps working afterwards', async () => {
      // Stopped by its own bound, not measured against the wall clock: a match that ran on would hang the test.
      await assert.rejects(matcher.match('^(a+)+$', `${'a'.repeat(40)}!`, { timeoutMs: 200 }), (error) => error instanceof PatternTimeoutError && error.timeoutMs === 200);
      assert.deepEqual(await matcher.match('a+', 'baa'), { match: { text: 'aa', index: 1 } });
    });

    it('answers calls made at the same time each with its own result', async () => {
      const results = await Promise.all(['one', 'two', 'three'].map((word) => matcher.match(word, `say ${word}`)));
      assert.deepEqual(
        results.map((result) => result.match?.text),
        ['one', 'two', 'three'],
      );
    });
  });
}
