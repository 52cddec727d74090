import pino from 'pino';
import type { Logger } from '../../ports/logger';

/** JSON lines on stdout (or the given destination) through pino. */
export class PinoLogger implements Logger {
  private readonly logger: pino.Logger;

  constructor(destination?: pino.DestinationStream, level: string = process.env.RUNLOOM_LOG_LEVEL ?? 'info') {
    this.logger = pino({ level, base: undefined }, destination ?? pino.destination({ dest: 1, sync: false }));
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
}

/** Drops every line: the default for an embedded core, which should not write to a host's stdout. */
export class SilentLogger implements Logger {
  info(): void {}
  warn(): void {}
  error(): void {}
}
