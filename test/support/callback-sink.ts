import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedCallback {
  /** ms since the sink started, on the sink's clock. */
  at: number;
  headers: Record<string, string>;
  body: string;
}

/** How the sink answers one request: a status, or `hang` to never answer. */
export type SinkAnswer = number | 'hang';

/**
 * A callback receiver on 127.0.0.1: records every request and answers per `answer(n)` (n counts
 * from 1), by default 200.
 */
export class CallbackSink {
  readonly received: ReceivedCallback[] = [];
  /** `request n` when the n-th request arrived, `closed n` when its connection closed first (the client gave up). */
  readonly log: string[] = [];
  connections = 0;
  answer: (n: number) => SinkAnswer = () => 200;
  private readonly server: http.Server;
  private readonly started: number;
  private waiters: (() => void)[] = [];

  private constructor(private readonly now: () => number) {
    this.started = now();
    this.server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(request.headers)) if (typeof value === 'string') headers[name] = value;
        this.received.push({ at: this.now() - this.started, headers, body: Buffer.concat(chunks).toString('utf8') });
        const n = this.received.length;
        this.log.push(`request ${n}`);
        response.on('close', () => {
          if (!response.writableFinished) this.log.push(`closed ${n}`);
        });
        for (const wake of this.waiters.splice(0)) wake();
        const answer = this.answer(this.received.length);
        if (answer === 'hang') return;
        response.writeHead(answer, answer >= 300 && answer < 400 ? { location: '/elsewhere' } : {});
        response.end('ok');
      });
    });
    this.server.on('connection', () => {
      this.connections += 1;
    });
  }

  /** `now` times the arrivals (a test's ManualClock, say); by default the system clock. */
  static async start(now: () => number = Date.now): Promise<CallbackSink> {
    const sink = new CallbackSink(now);
    await new Promise<void>((resolve) => sink.server.listen(0, '127.0.0.1', resolve));
    return sink;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks/run`;
  }

  /** Resolves once `count` requests have arrived; rejects after `timeoutMs`. */
  async waitFor(count: number, timeoutMs = 5000): Promise<ReceivedCallback[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.received.length < count) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`the sink got ${this.received.length} of ${count} callbacks within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.received.slice(0, count);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** Receives run callbacks on loopback and answers 200 to each: for tests whose callback URLs must not reach the internet. */
export async function startCallbackReceiver(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => response.end('ok'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
