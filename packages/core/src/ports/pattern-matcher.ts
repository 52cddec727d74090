/**
 * Runs user-supplied regular expressions (evaluation labels) with a time bound, so a pattern that
 * backtracks catastrophically costs at most `timeoutMs` instead of blocking the process.
 * Patterns use JavaScript syntax and are searched anywhere in the input (anchor with ^…$).
 */
export const PatternMatcher = Symbol.for('runloom.PatternMatcher');

export interface PatternMatch {
  /** The first match, or null when the pattern does not match. */
  match: { text: string; index: number } | null;
}

export interface PatternMatcher {
  /** Throws `InvalidPatternError` for a pattern that does not compile, `PatternTimeoutError` past the bound. */
  match(pattern: string, input: string, options?: { flags?: string; timeoutMs?: number }): Promise<PatternMatch>;
}

export class InvalidPatternError extends Error {
  constructor(reason: string) {
    super(`invalid regular expression: ${reason}`);
    this.name = 'InvalidPatternError';
  }
}

export class PatternTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`the regular expression did not finish within ${timeoutMs} ms`);
    this.name = 'PatternTimeoutError';
  }
}
