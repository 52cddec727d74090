import { Worker } from 'node:worker_threads';
import { InvalidPatternError, type PatternMatch, type PatternMatcher, PatternTimeoutError } from '../../ports/pattern-matcher';

const DEFAULT_TIMEOUT_MS = 1000;
/** An idle worker is stopped after this long, so closed instances leave no threads behind. */
const IDLE_MS = 30_000;

/** Worker source, evaluated as a script: no file to ship beside the bundle. */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', ({ pattern, flags, input }) => {
  const found = new RegExp(pattern, flags).exec(input);
  parentPort.postMessage(found ? { text: found[0], index: found.index } : null);
});
`;

/**
 * Matches on a worker thread, one pattern at a time; a match that overruns its bound terminates
 * the worker (the only way to stop a running RegExp) and the next call starts a fresh one.
 */
export class WorkerPatternMatcher implements PatternMatcher {
  private worker: Worker | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  async match(pattern: string, input: string, options: { flags?: string; timeoutMs?: number } = {}): Promise<PatternMatch> {
    const flags = options.flags ?? '';
    try {
      // Compiling is cheap and bounded; only matching can run away.
      new RegExp(pattern, flags);
    } catch (error) {
      throw new InvalidPatternError(error instanceof Error ? error.message : String(error));
    }
    const run = this.queue.then(() => this.runOnWorker(pattern, flags, input, options.timeoutMs ?? DEFAULT_TIMEOUT_MS));
    this.queue = run.catch(() => undefined).finally(() => this.stopWhenIdle());
    return run;
  }

  private stopWhenIdle(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      const worker = this.worker;
      this.worker = undefined;
      void worker?.terminate();
    }, IDLE_MS);
    this.idleTimer.unref();
  }

  private runOnWorker(pattern: string, flags: string, input: string, timeoutMs: number): Promise<PatternMatch> {
    clearTimeout(this.idleTimer);
    const worker = (this.worker ??= this.startWorker());
    return new Promise<PatternMatch>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
      };
      const onMessage = (match: PatternMatch['match']): void => {
        done();
        resolve({ match });
      };
      const onError = (error: Error): void => {
        done();
        this.worker = undefined;
        reject(error);
      };
      const timer = setTimeout(() => {
        done();
        if (this.worker === worker) this.worker = undefined;
        void worker.terminate();
        reject(new PatternTimeoutError(timeoutMs));
      }, timeoutMs);
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.postMessage({ pattern, flags, input });
    });
  }

  private startWorker(): Worker {
    const worker = new Worker(WORKER_SOURCE, { eval: true });
    // An idle matcher must not keep the process alive.
    worker.unref();
    return worker;
  }
}
