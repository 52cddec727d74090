import pino from 'pino';
import type { Logger } from '../../ports/logger';

/** JSON lines on stdout (or the given destination) through pino. */
export class PinoLogger implements Logger {
  private readonly logger: pino.Logger;
  private readonly destination: pino.DestinationStream;

  /** Without `destination`: stdout, written asynchronously (`flushSync` before the process exits). */
  constructor(destination?: pino.DestinationStream, level: string = process.env.RUNLOOM_LOG_LEVEL ?? 'info') {
    this.destination = destination ?? pino.destination({ dest: 1, sync: false });
    this.logger = pino({ level, base: undefined }, this.destination);
  }

  info(fields: Record<string, unknown>, message: string): void {
    this.logger.info(fields, message);
  }
  warn(fields: Record<string, unknown>, message: string): void {
    this.logger.warn(fields, message);
  }
  error(fields: Record<string, unknown>, message: string): void {
    this.logger.error(fields, message);
  }
  flush(): void {
    this.logger.flush();
  }
  /** Writes out what is buffered before returning (a destination that buffers, like stdout's). */
  flushSync(): void {
    (this.destination as { flushSync?: () => void }).flushSync?.();
  }
}

/** Drops every line: the default for an embedded core, which should not write to a host's stdout. */
export class SilentLogger implements Logger {
  info(): void {}
  warn(): void {}
  error(): void {}
}
