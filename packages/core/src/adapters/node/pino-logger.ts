import pino from 'pino';
import { lazy } from '../../domain/lazy';
import type { Logger } from '../../ports/logger';

/**
 * Lines to stdout are gathered until this many characters are waiting or FLUSH_DELAY_MS has passed
 * since the first of them: one write per line (an access log line per request) was a few percent
 * of a small request's CPU (bench/peer-bullmq.bench.ts).
 */
const STDOUT_BUFFER_CHARS = 8192;
const FLUSH_DELAY_MS = 50;

type SonicBoom = ReturnType<typeof pino.destination>;

/** JSON lines on stdout (or the given destination) through pino. */
export class PinoLogger implements Logger {
  private readonly logger: pino.Logger;
  private readonly destination: pino.DestinationStream;
  /** The batching in front of stdout, when the lines go there. */
  private readonly stdout: LineBatches | undefined;

  /**
   * Without `destination`: stdout, batched and written asynchronously, each line out within
   * FLUSH_DELAY_MS (`flushSync` before the process exits; it also runs on exit). Every such logger
   * of the process shares one batching, so their lines never interleave and one exit listener serves all.
   */
  constructor(destination?: pino.DestinationStream, level: string = process.env.RUNLOOM_LOG_LEVEL ?? 'info') {
    if (destination === undefined) this.stdout = stdoutBatches();
    this.destination = destination ?? this.stdout!;
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
    this.stdout?.pass();
    this.logger.flush();
  }
  /** Writes out what is buffered before returning (a destination that buffers, like stdout's). */
  flushSync(): void {
    (this.destination as { flushSync?: () => void }).flushSync?.();
  }
}

/** The process's one batching in front of stdout, written out when the process exits. */
const stdoutBatches = lazy(() => {
  const batches = new LineBatches(pino.destination({ dest: 1, sync: false }));
  process.once('exit', () => batches.flushSync());
  return batches;
});

/**
 * Lines joined into one write of the stream each STDOUT_BUFFER_CHARS or FLUSH_DELAY_MS. sonic-boom
 * buffers by itself (`minLength`), but measures its whole pending buffer again for every line
 * written to it: with an access log line per request, that was a fifth of a small request's CPU.
 */
class LineBatches {
  private lines: string[] = [];
  private chars = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly stream: SonicBoom) {}

  write(line: string): void {
    this.lines.push(line);
    this.chars += line.length;
    if (this.chars >= STDOUT_BUFFER_CHARS) {
      this.pass();
    } else if (!this.timer) {
      this.timer = setTimeout(() => this.pass(), FLUSH_DELAY_MS);
      this.timer.unref();
    }
  }

  /** Hands the waiting lines to the stream, which writes them as soon as its previous write is done. */
  pass(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.lines.length === 0) return;
    const text = this.lines.join('');
    this.lines = [];
    this.chars = 0;
    this.stream.write(text);
  }

  flushSync(): void {
    this.pass();
    this.stream.flushSync();
  }
}

/** Drops every line: the default for an embedded core, which should not write to a host's stdout. */
export class SilentLogger implements Logger {
  info(): void {}
  warn(): void {}
  error(): void {}
}
