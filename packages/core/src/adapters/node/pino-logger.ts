import pino from 'pino';
import type { Logger } from '../../ports/logger';

/**
 * Lines to stdout are gathered until this many bytes are waiting or FLUSH_DELAY_MS has passed since
 * the first of them: one write per line (an access log line per request) was a few percent of a
 * small request's CPU (bench/peer-bullmq.bench.ts).
 */
const STDOUT_BUFFER_BYTES = 8192;
const FLUSH_DELAY_MS = 50;

/** JSON lines on stdout (or the given destination) through pino. */
export class PinoLogger implements Logger {
  private readonly logger: pino.Logger;
  private readonly destination: pino.DestinationStream;
  /** Set while lines wait in the stdout buffer for their write. */
  private flushTimer: NodeJS.Timeout | undefined;
  /** The buffered stdout stream, when the lines go there. */
  private readonly stdout: ReturnType<typeof pino.destination> | undefined;

  /**
   * Without `destination`: stdout, buffered and written asynchronously, each line out within
   * FLUSH_DELAY_MS (`flushSync` before the process exits; pino also flushes it on exit).
   */
  constructor(destination?: pino.DestinationStream, level: string = process.env.RUNLOOM_LOG_LEVEL ?? 'info') {
    if (destination === undefined) this.stdout = pino.destination({ dest: 1, sync: false, minLength: STDOUT_BUFFER_BYTES });
    this.destination = destination ?? this.stdout!;
    this.logger = pino({ level, base: undefined }, this.destination);
  }

  info(fields: Record<string, unknown>, message: string): void {
    this.logger.info(fields, message);
    this.flushSoon();
  }
  warn(fields: Record<string, unknown>, message: string): void {
    this.logger.warn(fields, message);
    this.flushSoon();
  }
  error(fields: Record<string, unknown>, message: string): void {
    this.logger.error(fields, message);
    this.flushSoon();
  }
  flush(): void {
    this.logger.flush();
  }
  /** Writes out what is buffered before returning (a destination that buffers, like stdout's). */
  flushSync(): void {
    (this.destination as { flushSync?: () => void }).flushSync?.();
  }

  private flushSoon(): void {
    const stdout = this.stdout;
    if (!stdout || this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      // Without a callback: pino's flush passes one, and sonic-boom then fsyncs stdout (a disk sync
      // when it is a file) and adds a listener per flush while a write is under way.
      stdout.flush();
    }, FLUSH_DELAY_MS);
    this.flushTimer.unref();
  }
}

/** Drops every line: the default for an embedded core, which should not write to a host's stdout. */
export class SilentLogger implements Logger {
  info(): void {}
  warn(): void {}
  error(): void {}
}
