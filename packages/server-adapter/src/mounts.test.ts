import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import fastify from 'fastify';
import { createRequestListener } from './node';
import { runloomMiddleware } from './express';
import { runloomFastify } from './fastify';
import type { WebHandler } from './translate';
import { waitUntil } from '../../../test/support/wait';
import { type Answer, ApiError, type Exchange, jsonResponse, openSseStream, pacedSseResponse, route, Router, type SseCloseReason } from '@runloom/core';
import { SystemClock } from '@runloom/core/node';

const CHUNK_SIZE = 16 * 1024;
const STREAM_CHUNKS = 1024; // 16 MiB: more than loopback socket buffers absorb

/** A web handler exercising what the translation layer must carry: JSON, streams both ways, aborts. */
class ProbeHandler implements WebHandler {
  produced = 0;
  readonly streamCancelled = deferred<void>();
  readonly requestAborted = deferred<void>();
  readonly uploadStarted = deferred<void>();
  /** Resolved when /hang and /late have their request in hand. */
  readonly hangEntered = deferred<void>();
  readonly lateEntered = deferred<void>();
  /** The test releases /late once the server has seen the client go. */
  readonly lateRelease = deferred<void>();
  readonly lateSignalAborted = deferred<boolean>();
  /** How many times /events' source was asked for frames. */
  eventTakes = 0;
  /** Why the event stream /late-events answered ended. */
  readonly lateEventsClosed = deferred<SseCloseReason>();

  async handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    switch (`${request.method} ${url.pathname}`) {
      case 'GET /json': {
        const headers = new Headers({ 'x-probe': 'yes' });
        headers.append('set-cookie', 'a=1; Path=/');
        headers.append('set-cookie', 'b=2; Path=/');
        return Response.json({ path: url.pathname, search: url.search, agent: request.headers.get('user-agent'), origin: url.origin }, { headers });
      }
      case 'GET /core-json':
        // Built by core's jsonResponse: the adapter writes its text without reading the stream.
        return jsonResponse(200, { list: [{ name: 'ü' }] }, { 'x-probe': 'core' });
      case 'POST /echo':
        return Response.json({ received: await request.json() }, { status: 201 });
      case 'GET /stream':
        return new Response(this.numberedChunks(), { headers: { 'content-type': 'application/octet-stream' } });
      case 'POST /upload':
        return Response.json(await this.digest(request));
      case 'GET /hang':
        request.signal.addEventListener('abort', () => this.requestAborted.resolve());
        this.hangEntered.resolve();
        await this.requestAborted.promise;
        return new Response(null, { status: 204 });
      case 'GET /late':
        // Looks at the signal only after the client has gone.
        this.lateEntered.resolve();
        await this.lateRelease.promise;
        this.lateSignalAborted.resolve(request.signal.aborted);
        return new Response(null, { status: 204 });
      case 'GET /events':
        return this.pacedEvents();
      case 'GET /late-events':
        // Answers an event stream only after the client has gone.
        this.lateEntered.resolve();
        await this.lateRelease.promise;
        return openSseStream({ clock: new SystemClock(), onClose: (reason) => this.lateEventsClosed.resolve(reason) }).response;
      default:
        return Response.json({ error: 'no such probe' }, { status: 404 });
    }
  }

  /** An event stream read at the client's pace: STREAM_CHUNKS frames of CHUNK_SIZE bytes, each made when taken. */
  private pacedEvents(): Response {
    return pacedSseResponse(
      {
        take: () => {
          this.eventTakes += 1;
          const bytes = new Uint8Array(CHUNK_SIZE).fill(0x61);
          bytes.set(new TextEncoder().encode('data: '));
          bytes.set([0x0a, 0x0a], CHUNK_SIZE - 2);
          return { bytes, ended: this.eventTakes === STREAM_CHUNKS };
        },
        whenReady: () => () => undefined,
        close: () => undefined,
      },
      { clock: new SystemClock(), heartbeatMs: 1000, headers: { 'content-type': 'text/event-stream' } },
    );
  }

  /** STREAM_CHUNKS chunks, chunk i filled with byte i % 256, produced only when pulled. */
  private numberedChunks(): ReadableStream<Uint8Array> {
    return new ReadableStream<Uint8Array>({
      pull: (controller) => {
        if (this.produced === STREAM_CHUNKS) return controller.close();
        controller.enqueue(new Uint8Array(CHUNK_SIZE).fill(this.produced % 256));
        this.produced += 1;
      },
      cancel: () => this.streamCancelled.resolve(),
    });
  }

  private async digest(request: Request): Promise<{ bytes: number; sha256: string }> {
    const hash = createHash('sha256');
    let bytes = 0;
    const reader = request.body!.getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      this.uploadStarted.resolve();
      hash.update(read.value);
      bytes += read.value.byteLength;
    }
    return { bytes, sha256: hash.digest('hex') };
  }
}

/**
 * The same probe behind Runloom's native entry (`dispatch`), as `runloom serve` mounts it: JSON is
 * read through the exchange, everything else through the web Request it builds on demand.
 */
class ProbeDispatcher extends ProbeHandler {
  async dispatch(exchange: Exchange): Promise<Answer> {
    const { pathname } = new URL(exchange.url);
    const json = (status: number, body: unknown): Answer => ({
      status,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      text: JSON.stringify(body),
    });
    switch (`${exchange.method} ${pathname}`) {
      case 'POST /echo':
        return json(201, { received: JSON.parse(await exchange.readText(1024)) });
      case 'POST /text':
        try {
          return json(200, { text: await exchange.readText(BODY_LIMIT), joined: exchange.header('x-twice'), absent: exchange.header('x-absent') });
        } catch (error) {
          return json((error as ApiError).status, { error: (error as ApiError).message });
        }
      case 'GET /late':
        // Builds the web Request only after the client has gone.
        this.lateEntered.resolve();
        await this.lateRelease.promise;
        this.lateSignalAborted.resolve(exchange.request().signal.aborted);
        return { status: 204, headers: {}, text: null };
      default:
        return this.handle(exchange.request());
    }
  }
}

const BODY_LIMIT = 64;

interface Mounted {
  url: string;
  /** The node:http server underneath, to watch its requests and responses. */
  server: http.Server;
  close(): Promise<void>;
}

const mounts: Record<string, (handler: WebHandler) => Promise<Mounted>> = {
  'node:http': async (handler) => listen(http.createServer(createRequestListener(handler))),
  'express 5': async (handler) => {
    const app = express();
    app.use(runloomMiddleware(handler));
    return listen(http.createServer(app));
  },
  'fastify 5': async (handler) => {
    const app = fastify({ forceCloseConnections: true });
    await app.register(runloomFastify, { runloom: handler });
    await app.listen({ host: '127.0.0.1', port: 0 });
    return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, server: app.server, close: () => app.close() };
  },
};

const entries = { 'web handler': () => new ProbeHandler(), 'native dispatch': () => new ProbeDispatcher() };

for (const [name, mount] of Object.entries(mounts)) for (const [entry, makeHandler] of Object.entries(entries)) {
  describe(`server-adapter mounted on ${name}, ${entry}`, () => {
    let handler: ProbeHandler;
    let server: Mounted;

    beforeEach(async () => {
      handler = makeHandler();
      server = await mount(handler);
    });
    afterEach(() => server.close());

    /**
     * Requests `path`, whose route waits for `lateRelease`, and leaves while it waits; releases the
     * route once the server has seen the client go.
     */
    async function leaveWhileTheRouteWaits(path: string): Promise<void> {
      const serverResponse = nextResponse(server.server);
      const request = http.get(`${server.url}${path}`);
      request.on('error', () => undefined);
      await handler.lateEntered.promise;
      const closed = once(await serverResponse, 'close');
      request.destroy();
      await closed;
      handler.lateRelease.resolve();
    }

    if (entry === 'native dispatch') {
      it('reads a body as text without its BOM, and repeated headers joined as Headers.get joins them', async () => {
        const request = http.request(`${server.url}/text`, { method: 'POST', headers: { 'content-type': 'text/plain' } });
        request.setHeader('x-twice', ['a', 'b']);
        request.end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('ü text')]));
        const [response] = (await once(request, 'response')) as [IncomingMessage];
        assert.equal(response.statusCode, 200);
        const body = await readAll(response);
        assert.equal(response.headers['content-length'], String(Buffer.byteLength(body)));
        assert.deepEqual(JSON.parse(body), { text: 'ü text', joined: 'a, b', absent: null });
      });

      it('answers 413 past the body limit without reading the rest, and the connection keeps serving', async () => {
        const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
        try {
          const post = async (size: number): Promise<[number, string]> => {
            const request = http.request(`${server.url}/text`, { method: 'POST', agent, headers: { 'content-length': size } });
            request.end(Buffer.alloc(size, 'x'));
            const [response] = (await once(request, 'response')) as [IncomingMessage];
            return [response.statusCode!, await readAll(response)];
          };
          const [status, body] = await post(1024 * 1024);
          assert.equal(status, 413);
          assert.match(body, /over the limit of 64 bytes/);
          assert.deepEqual(await post(BODY_LIMIT), [200, JSON.stringify({ text: 'x'.repeat(BODY_LIMIT), joined: null, absent: null })]);
        } finally {
          agent.destroy();
        }
      });
    }

    it('round-trips JSON with status, headers and each Set-Cookie separately', async () => {
      const response = await fetch(`${server.url}/echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'ü', list: [1, 2] }),
      });
      assert.equal(response.status, 201);
      assert.deepEqual(await response.json(), { received: { name: 'ü', list: [1, 2] } });

      const get = await fetch(`${server.url}/json?x=1`, { headers: { 'user-agent': 'probe/1' } });
      assert.equal(get.status, 200);
      assert.equal(get.headers.get('x-probe'), 'yes');
      assert.deepEqual(get.headers.getSetCookie(), ['a=1; Path=/', 'b=2; Path=/']);
      assert.equal(get.headers.get('content-length'), String((await get.clone().arrayBuffer()).byteLength));
      assert.deepEqual(await get.json(), { path: '/json', search: '?x=1', agent: 'probe/1', origin: server.url });
    });

    it("writes core's JSON responses whole, with a Content-Length in bytes", async () => {
      const response = await fetch(`${server.url}/core-json`);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('x-probe'), 'core');
      assert.equal(response.headers.get('content-type'), 'application/json; charset=utf-8');
      assert.equal(response.headers.get('content-length'), String(Buffer.byteLength('{"list":[{"name":"ü"}]}')));
      assert.deepEqual(await response.json(), { list: [{ name: 'ü' }] });
    });

    it('answers the root path and unknown paths through the handler', async () => {
      const response = await fetch(`${server.url}/`);
      assert.equal(response.status, 404);
      assert.deepEqual(await response.json(), { error: 'no such probe' });
    });

    it('streams a response to a slow reader, producing only as fast as the client reads', async () => {
      // The socket buffers fill, then the adapter stops reading the stream and waits for 'drain'
      // (which a paused client never causes): what was produced by then is all that will be.
      const { response, res } = await pausedTillFull(server, '/stream');
      assert.ok(res.listenerCount('drain') > 0, 'the adapter keeps writing into a full response instead of waiting for drain');
      const producedWhilePaused = handler.produced;
      assert.ok(producedWhilePaused < STREAM_CHUNKS / 2, `produced ${producedWhilePaused} chunks for a paused reader`);
      assert.equal(response.headers['transfer-encoding'], 'chunked');

      let received = 0;
      let mismatch: string | undefined;
      response.on('data', (chunk: Buffer) => {
        for (let index = 0; index < chunk.length && mismatch === undefined; index += 4096) {
          const expected = Math.floor((received + index) / CHUNK_SIZE) % 256;
          if (chunk[index] !== expected) mismatch = `byte ${received + index} is ${chunk[index]}, expected ${expected}`;
        }
        received += chunk.length;
      });
      response.resume();
      await once(response, 'end');
      assert.equal(mismatch, undefined);
      assert.equal(received, STREAM_CHUNKS * CHUNK_SIZE);
    });

    it('streams a large upload into the route before the client has sent it all', async () => {
      const body = Buffer.alloc(8 * 1024 * 1024);
      for (let index = 0; index < body.length; index += 1) body[index] = (index * 7) % 251;
      const request = http.request(`${server.url}/upload`, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream', 'content-length': body.length },
      });
      const responded = once(request, 'response') as Promise<[IncomingMessage]>;
      request.write(body.subarray(0, 1024 * 1024));
      // The route reads the first part while most of the body is still on the client.
      await handler.uploadStarted.promise;
      request.end(body.subarray(1024 * 1024));
      const [response] = await responded;
      assert.equal(response.statusCode, 200);
      assert.deepEqual(JSON.parse(await readAll(response)), {
        bytes: body.length,
        sha256: createHash('sha256').update(body).digest('hex'),
      });
    });

    it('cancels the response stream when the client disconnects', async () => {
      const response = await rawRequest(`${server.url}/stream`);
      await once(response, 'data');
      response.destroy();
      await handler.streamCancelled.promise;
      assert.ok(handler.produced < STREAM_CHUNKS);
    });

    it('writes an event stream read at its client’s pace only as fast as the client reads', async () => {
      const { response } = await pausedTillFull(server, '/events');
      const takenWhilePaused = handler.eventTakes;
      assert.ok(takenWhilePaused < STREAM_CHUNKS / 2, `took ${takenWhilePaused} frames for a paused reader`);
      let received = 0;
      response.on('data', (chunk: Buffer) => (received += chunk.length));
      response.resume();
      await once(response, 'end');
      assert.equal(received, STREAM_CHUNKS * CHUNK_SIZE);
    });

    it('cancels an event stream answered after its client left', async () => {
      await leaveWhileTheRouteWaits('/late-events');
      assert.equal(await handler.lateEventsClosed.promise, 'client-gone');
    });

    it("aborts the request's signal when the client disconnects mid-request", async () => {
      const request = http.get(`${server.url}/hang`);
      request.on('error', () => undefined);
      await handler.hangEntered.promise;
      request.destroy();
      await handler.requestAborted.promise;
    });

    it('gives an already aborted signal to a route that first looks after the client left', async () => {
      // The server has seen the client go before the route looks.
      await leaveWhileTheRouteWaits('/late');
      assert.equal(await handler.lateSignalAborted.promise, true);
    });
  });
}

/** A core Router with a JSON route and a file route: what HEAD and nosniff must survive on each mount. */
function coreRouter(): Router {
  const file = new Uint8Array(5000).fill(7);
  return new Router(
    [
      route({
        method: 'GET',
        path: '/json',
        public: true,
        summary: 'json',
        tag: 'test',
        responses: { 200: { description: 'ok' } },
        handle: async () => ({ status: 200, body: { name: 'ü', list: [1, 2, 3] }, headers: { etag: '"j1"' } }),
      }),
      route({
        method: 'GET',
        path: '/file',
        public: true,
        summary: 'file',
        tag: 'test',
        responses: { 200: { description: 'bytes', contentType: 'text/html' } },
        handle: async () =>
          new Response(new Blob([file]).stream(), {
            headers: { 'content-type': 'text/html', 'content-length': String(file.byteLength), etag: '"f1"', 'content-disposition': 'attachment' },
          }),
      }),
    ],
    {
      basePath: '',
      jsonBodyLimitBytes: 1024,
      rateLimit: 0,
      authenticate: async () => {
        throw new ApiError('UNAUTHORIZED');
      },
      observer: { onRequest: () => undefined },
    },
  );
}

async function exchangeRaw(url: string, method: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; bytes: number }> {
  const request = http.request(url, { method });
  request.end();
  const [response] = (await once(request, 'response')) as [IncomingMessage];
  let bytes = 0;
  for await (const chunk of response) bytes += (chunk as Buffer).byteLength;
  return { status: response.statusCode!, headers: response.headers, bytes };
}

for (const [name, mount] of Object.entries(mounts)) {
  for (const entry of ['web handler', 'native dispatch'] as const) {
    describe(`core Router mounted on ${name}, ${entry}: HEAD and nosniff`, () => {
      let server: Mounted;
      beforeEach(async () => {
        const router = coreRouter();
        const handler: WebHandler = entry === 'web handler' ? { handle: (request) => router.handle(request) } : router;
        server = await mount(handler);
      });
      afterEach(() => server.close());

      it('answers HEAD like GET without a body, with the same Content-Length, ETag and nosniff', async () => {
        for (const path of ['/json', '/file']) {
          const get = await exchangeRaw(`${server.url}${path}`, 'GET');
          const head = await exchangeRaw(`${server.url}${path}`, 'HEAD');
          assert.equal(get.status, 200);
          assert.equal(head.status, 200, path);
          assert.equal(head.bytes, 0, path);
          assert.equal(get.headers['content-length'], String(get.bytes), path);
          for (const header of ['content-length', 'content-type', 'etag', 'content-disposition', 'x-content-type-options']) {
            assert.equal(head.headers[header], get.headers[header], `${path} ${header}`);
          }
          assert.equal(head.headers['x-content-type-options'], 'nosniff');
        }
        const allow = await exchangeRaw(`${server.url}/json`, 'DELETE');
        assert.equal(allow.status, 405);
        assert.equal(allow.headers.allow, 'GET, HEAD');
        assert.equal(allow.headers['x-content-type-options'], 'nosniff');
      });
    });
  }
}

describe('server-adapter answers of its own', () => {
  it('carry nosniff too (a handler that throws)', async () => {
    for (const [name, mount] of Object.entries(mounts)) {
      const server = await mount({
        handle: () => Promise.reject(new Error('boom')),
        dispatch: () => Promise.reject(new Error('boom')),
      });
      try {
        const answer = await exchangeRaw(`${server.url}/x`, 'GET');
        assert.equal(answer.status, 500, name);
        assert.equal(answer.headers['x-content-type-options'], 'nosniff', name);
      } finally {
        await server.close();
      }
    }
  });
});

describe('server-adapter runloomMiddleware after a body parser', () => {
  it('re-encodes the parsed JSON body for the handler', async () => {
    const app = express();
    app.use(express.json());
    app.use(runloomMiddleware(new ProbeHandler()));
    const server = await listen(http.createServer(app));
    try {
      const response = await fetch(`${server.url}/echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ after: 'parser' }),
      });
      assert.equal(response.status, 201);
      assert.deepEqual(await response.json(), { received: { after: 'parser' } });
    } finally {
      await server.close();
    }
  });

  it('routes the original URL when mounted under a path', async () => {
    const app = express();
    app.use('/api', runloomMiddleware(new ProbeHandler()));
    const server = await listen(http.createServer(app));
    try {
      const response = await fetch(`${server.url}/api/json`);
      assert.equal(response.status, 404, 'the handler sees /api/json, which the probe does not serve');
    } finally {
      await server.close();
    }
  });
});

async function listen(server: http.Server): Promise<Mounted> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

async function rawRequest(url: string): Promise<IncomingMessage> {
  const request = http.get(url);
  const [response] = (await once(request, 'response')) as [IncomingMessage];
  return response;
}

async function readAll(response: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The response object of the next request the server receives. */
/** Requests `path` and reads none of the answer: resolves once the server's response has filled the socket buffers. */
async function pausedTillFull(server: Mounted, path: string): Promise<{ response: IncomingMessage; res: ServerResponse }> {
  const serverResponse = nextResponse(server.server);
  const response = await rawRequest(`${server.url}${path}`);
  response.pause();
  const res = await serverResponse;
  await waitUntil(() => res.writableNeedDrain, 'the response to fill the socket buffers');
  return { response, res };
}

function nextResponse(server: http.Server): Promise<ServerResponse> {
  return new Promise((resolve) => server.once('request', (_request: IncomingMessage, response: ServerResponse) => resolve(response)));
}

function deferred<T>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}
