import { once } from 'node:events';
import http, { type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequestListener } from './node';
import type { MountOptions, WebHandler } from './translate';

export interface ListenOptions extends MountOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** How long `stop()` lets in-flight requests finish before cutting their connections. */
  shutdownGraceMs?: number;
}

export interface ListeningServer {
  server: http.Server;
  /** `http://HOST:PORT` with the port actually bound. */
  url: string;
  /**
   * Stops accepting connections, lets in-flight requests finish (up to the grace period), closes
   * keep-alive connections as they fall idle, and resolves once every connection is closed.
   */
  stop(): Promise<void>;
}

/** Serves `runloom` on node:http at `host:port`, with a graceful `stop()`. */
export async function listen(runloom: WebHandler, options: ListenOptions): Promise<ListeningServer> {
  const listener = createRequestListener(runloom, options);
  const inFlight = new Set<ServerResponse>();
  let stopping: Promise<void> | undefined;

  // One listener for every response (no closure per request): `this` is the response that closed.
  function onResponseClose(this: ServerResponse): void {
    inFlight.delete(this);
    // Its connection is idle one turn later; close it now rather than at the keep-alive timeout.
    if (stopping) setImmediate(() => server.closeIdleConnections());
  }
  const server = http.createServer((req, res) => {
    // A request that arrives on a kept-alive connection during shutdown is served, then the connection ends.
    if (stopping) res.setHeader('connection', 'close');
    inFlight.add(res);
    res.on('close', onResponseClose);
    listener(req, res);
  });
  server.listen(options.port, options.host);
  await Promise.race([once(server, 'listening'), once(server, 'error').then(([error]) => Promise.reject(error as Error))]);

  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    server,
    url: `http://${host}:${port}`,
    stop: () => {
      stopping ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const res of inFlight) if (!res.headersSent) res.setHeader('connection', 'close');
        server.closeIdleConnections();
        const cutOff = setTimeout(() => server.closeAllConnections(), options.shutdownGraceMs ?? 10_000);
        await closed;
        clearTimeout(cutOff);
      })();
      return stopping;
    },
  };
}
