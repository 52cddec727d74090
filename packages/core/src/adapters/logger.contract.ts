import type { Logger } from '../ports/logger';

/** The behaviour every `Logger` adapter must have; each adapter's test file runs it. */
export function loggerContract(name: string, createLogger: () => Logger): void {
  describe(`Logger contract: ${name}`, () => {
    it('takes every level with fields and a message, and never throws, not even on awkward fields', () => {
      const logger = createLogger();
      const circular: Record<string, unknown> = { name: 'loop' };
      circular.self = circular;
      for (const level of ['info', 'warn', 'error'] as const) {
        logger[level]({ requestId: 'r1', status: 200 }, `${level} line`);
        logger[level]({ circular, big: 10n, err: new Error('boom'), nothing: undefined }, 'awkward fields');
        logger[level]({}, '');
      }
    });
  });
}
