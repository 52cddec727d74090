import { strict as assert } from 'node:assert';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { EgressRefusedError, type EgressPolicy, type HttpClient, HttpRequestError } from '../ports/http-client';

/** A loopback server whose behaviour each test sets, counting the connections it accepts. */
export interface LoopbackSink {
  port: number;
  connections: number;
  requests: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[];
  respond: (request: IncomingMessage, response: ServerResponse) => void;
  close(): Promise<void>;
}

export async function startLoopbackSink(host = '127.0.0.1'): Promise<LoopbackSink> {
  const sink: LoopbackSink = {
    port: 0,
    connections: 0,
    requests: [],
    respond: (_request, response) => response.end('ok'),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      sink.requests.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      sink.respond(request, response);
    });
  });
  server.on('connection', () => {
    sink.connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  sink.port = (server.address() as AddressInfo).port;
  return sink;
}

const ALLOW: EgressPolicy = { allowPrivateNetwork: true };
const GUARD: EgressPolicy = { allowPrivateNetwork: false };

async function refusal(promise: Promise<unknown>, range: string): Promise<EgressRefusedError> {
  const error = await promise.then(
    () => assert.fail('the request was sent'),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof EgressRefusedError, `expected EgressRefusedError, got ${String(error)}`);
  assert.equal(error.range, range);
  return error;
}

async function failureKind(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => assert.fail('expected a failure'),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof HttpRequestError, `expected HttpRequestError, got ${String(error)}`);
  return error.kind;
}

/** Asserts `fetch`'s rejection of a destination it could not reach: `TypeError('fetch failed')` with an `HttpRequestError` cause. */
function assertFetchUnreachable(error: unknown): void {
  assert.ok(error instanceof TypeError && error.message === 'fetch failed', String(error));
  assert.ok(error.cause instanceof HttpRequestError && error.cause.kind === 'network');
}

/**
 * The one contract every `HttpClient` adapter passes. `create(policy)` makes a client whose
 * default egress policy is `policy`. Only loopback is ever contacted.
 */
export function describeHttpClientContract(name: string, create: (egress: EgressPolicy) => HttpClient): void {
  describe(`HttpClient contract: ${name}`, () => {
    let sink: LoopbackSink;
    beforeEach(async () => {
      sink = await startLoopbackSink();
    });
    afterEach(async () => {
      await sink.close();
    });
    /** Runs `send` with a URL on a port nothing listens on (the sink's, closed), then starts a new sink. */
    const withSinkClosed = async (send: (url: string) => Promise<void>): Promise<void> => {
      const port = sink.port;
      await sink.close();
      try {
        await send(`http://127.0.0.1:${port}/`);
      } finally {
        sink = await startLoopbackSink();
      }
    };

    it('posts the body and headers and answers status, headers and body text', async () => {
      sink.respond = (_request, response) => {
        response.writeHead(201, { 'x-answer': 'yes', 'content-type': 'text/plain' });
        response.end('créé');
      };
      const response = await create(ALLOW).post({
        url: `http://127.0.0.1:${sink.port}/hook?x=1`,
        headers: { 'content-type': 'application/json', 'x-custom': 'v' },
        body: '{"a":1}',
      });
      assert.equal(response.status, 201);
      assert.equal(response.headers['x-answer'], 'yes');
      assert.equal(response.bodyText, 'créé');
      assert.equal(response.bodyTruncated, false);
      assert.deepEqual(
        sink.requests.map(({ method, url, headers, body }) => ({ method, url, custom: headers['x-custom'], body })),
        [{ method: 'POST', url: '/hook?x=1', custom: 'v', body: '{"a":1}' }],
      );
    });

    it('does not follow redirects: a 3xx comes back as it is', async () => {
      sink.respond = (_request, response) => {
        response.writeHead(302, { location: `http://127.0.0.1:${sink.port}/elsewhere` });
        response.end();
      };
      const response = await create(ALLOW).post({ url: `http://127.0.0.1:${sink.port}/`, body: 'x' });
      assert.equal(response.status, 302);
      assert.equal(sink.requests.length, 1);
    });

    it('reads at most maxResponseBytes of the body', async () => {
      sink.respond = (_request, response) => response.end('a'.repeat(100_000));
      const response = await create(ALLOW).request({ url: `http://127.0.0.1:${sink.port}/`, maxResponseBytes: 1000 });
      assert.equal(response.status, 200);
      assert.equal(response.bodyText, 'a'.repeat(1000));
      assert.equal(response.bodyTruncated, true);
    });

    it('gives up with kind timeout when no answer comes within timeoutMs', async () => {
      sink.respond = () => undefined;
      // The kind says the client's own timer ended it; a client that waited on would hang the test instead.
      assert.equal(await failureKind(create(ALLOW).post({ url: `http://127.0.0.1:${sink.port}/`, body: 'x', timeoutMs: 200 })), 'timeout');
    });

    it('stops with kind aborted when the caller’s signal aborts', async () => {
      sink.respond = () => undefined;
      const controller = new AbortController();
      const pending = create(ALLOW).post({ url: `http://127.0.0.1:${sink.port}/`, body: 'x', signal: controller.signal });
      setTimeout(() => controller.abort(), 50);
      assert.equal(await failureKind(pending), 'aborted');
    });

    it('reports a refused connection as kind network', async () => {
      await withSinkClosed(async (url) => assert.equal(await failureKind(create(ALLOW).post({ url, body: 'x' })), 'network'));
    });

    it('refuses URLs that are not http(s), carry credentials or do not parse', async () => {
      const client = create(ALLOW);
      for (const url of ['ftp://127.0.0.1/', `http://user:pw@127.0.0.1:${sink.port}/`, 'not a url', 'file:///etc/passwd']) {
        assert.equal(await failureKind(client.post({ url, body: 'x' })), 'invalid_url', url);
      }
      assert.equal(sink.connections, 0);
    });

    it('refuses a loopback target without allowPrivateNetwork, before connecting, and reaches it with it', async () => {
      const url = `http://127.0.0.1:${sink.port}/`;
      await refusal(create(GUARD).post({ url, body: 'x' }), 'loopback');
      assert.equal(sink.connections, 0);
      assert.equal((await create(ALLOW).post({ url, body: 'x' })).status, 200);
      assert.equal(sink.connections, 1);
    });

    it('lets a request carry its own policy over the client’s default', async () => {
      const url = `http://127.0.0.1:${sink.port}/`;
      await refusal(create(ALLOW).post({ url, body: 'x', egress: GUARD }), 'loopback');
      assert.equal((await create(GUARD).post({ url, body: 'x', egress: ALLOW })).status, 200);
    });

    it('refuses localhost, which resolves to loopback', async () => {
      const error = await refusal(create(GUARD).post({ url: `http://localhost:${sink.port}/`, body: 'x' }), 'loopback');
      assert.match(error.message, /localhost resolves to .*loopback/);
      assert.equal(sink.connections, 0);
    });

    it('refuses private, link-local, metadata, CGNAT and IPv4-mapped literals without sending anything', async () => {
      const client = create(GUARD);
      const cases: [string, string][] = [
        ['[::1]', 'loopback'],
        ['[::ffff:127.0.0.1]', 'loopback'],
        ['[::ffff:10.0.0.1]', 'private'],
        ['169.254.169.254', 'metadata'],
        ['169.254.1.1', 'linkLocal'],
        ['10.1.2.3', 'private'],
        ['172.16.5.4', 'private'],
        ['192.168.0.10', 'private'],
        ['100.64.0.1', 'carrierGradeNat'],
        ['0.0.0.0', 'unspecified'],
        ['[fd00:ec2::254]', 'metadata'],
        ['[fc00::1]', 'uniqueLocal'],
        ['[fe80::1]', 'linkLocal'],
        ['0x7f.1', 'loopback'],
        ['2130706433', 'loopback'],
        ['0x7f000001', 'loopback'],
        ['127.1', 'loopback'],
        ['0177.0.0.1', 'loopback'],
        ['017700000001', 'loopback'],
        ['127.0.0.1.', 'loopback'],
        ['[::ffff:7f00:1]', 'loopback'],
        ['[0:0:0:0:0:ffff:127.0.0.1]', 'loopback'],
        ['0', 'unspecified'],
        ['[::]', 'unspecified'],
        ['224.0.0.1', 'multicast'],
      ];
      for (const [host, range] of cases) {
        await refusal(client.post({ url: `http://${host}:${sink.port}/`, body: 'x' }), range);
        await refusal(client.checkDestination(`https://${host}/`), range);
        await refusal(client.fetch(`http://${host}:${sink.port}/v1/chat`, { method: 'POST', body: '{}' }), range);
      }
      assert.equal(sink.connections, 0);
    });

    it('names the flags that would let a refused destination in, the same whether anything listens there', async () => {
      const closed = await startLoopbackSink();
      await closed.close();
      const open = await refusal(create(GUARD).fetch(`http://127.0.0.1:${sink.port}/v1`), 'loopback');
      const shut = await refusal(create(GUARD).fetch(`http://127.0.0.1:${closed.port}/v1`), 'loopback');
      assert.match(open.message, new RegExp(`--egress-allow 127\\.0\\.0\\.1:${sink.port}\\b.*--allow-private-network`));
      assert.equal(open.message.replace(String(sink.port), 'PORT'), shut.message.replace(String(closed.port), 'PORT'));
      const named = await refusal(create(GUARD).checkDestination(`http://localhost:${sink.port}/`), 'loopback');
      assert.match(named.message, new RegExp(`--egress-allow localhost:${sink.port}\\b`));
      assert.match((await refusal(create(GUARD).checkDestination('https://[::1]/'), 'loopback')).message, /--egress-allow \[::1\]:443\b/);
      assert.equal(sink.connections, 0);
    });

    it('lets in exactly the destinations its allow entries name', async () => {
      const other = await startLoopbackSink();
      try {
        const onePort = create({ allowPrivateNetwork: false, allow: [`127.0.0.1:${sink.port}`] });
        assert.equal((await onePort.post({ url: `http://127.0.0.1:${sink.port}/`, body: 'x' })).status, 200);
        assert.equal((await onePort.fetch(`http://localhost:${sink.port}/`)).status, 200, 'a name resolving to the allowed address and port');
        await refusal(onePort.post({ url: `http://127.0.0.1:${other.port}/`, body: 'x' }), 'loopback');
        await refusal(onePort.fetch(`http://127.0.0.2:${sink.port}/`), 'loopback');
        await refusal(onePort.checkDestination(`http://10.0.0.1:${sink.port}/`), 'private');
        assert.equal(other.connections, 0);

        const spelled = create({ allowPrivateNetwork: false, allow: [`2130706433:${sink.port}`] });
        assert.equal((await spelled.fetch(`http://127.1:${sink.port}/`)).status, 200);

        const anyPort = create({ allowPrivateNetwork: false, allow: ['127.0.0.1'] });
        assert.equal((await anyPort.post({ url: `http://127.0.0.1:${other.port}/`, body: 'x' })).status, 200);

        const byName = create({ allowPrivateNetwork: false, allow: [`LocalHost:${sink.port}`] });
        assert.equal((await byName.fetch(`http://localhost:${sink.port}/`)).status, 200);
        await refusal(byName.fetch(`http://127.0.0.1:${sink.port}/`), 'loopback');
        await refusal(byName.fetch(`http://localhost:${other.port}/`), 'loopback');
        assert.equal(other.connections, 1);
      } finally {
        await other.close();
      }
    });

    it('refuses an allow entry that is not host[:port]', () => {
      for (const entry of ['', 'http://llm.lan', 'llm.lan:0', 'llm.lan:70000', 'llm.lan/v1', 'user@llm.lan', '[::1']) {
        assert.throws(() => create({ allowPrivateNetwork: false, allow: [entry] }), /egress allow entry #1 is invalid/, entry);
      }
    });

    describe('fetch', () => {
      it('sends method, headers and body and answers a web Response', async () => {
        sink.respond = (_request, response) => {
          response.writeHead(201, { 'content-type': 'application/json', 'x-answer': 'yes' });
          response.end('{"ok":true}');
        };
        const response = await create(ALLOW).fetch(`http://127.0.0.1:${sink.port}/v1/chat?x=1`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: 'Bearer k' },
          body: '{"a":1}',
        });
        assert.ok(response instanceof Response);
        assert.equal(response.status, 201);
        assert.equal(response.headers.get('x-answer'), 'yes');
        assert.deepEqual(await response.json(), { ok: true });
        assert.deepEqual(
          sink.requests.map(({ method, url, headers, body }) => ({ method, url, authorization: headers.authorization, body })),
          [{ method: 'POST', url: '/v1/chat?x=1', authorization: 'Bearer k', body: '{"a":1}' }],
        );
      });

      it('streams the body as it arrives', async () => {
        let finish!: () => void;
        sink.respond = (_request, response) => {
          response.writeHead(200, { 'content-type': 'text/event-stream' });
          response.write('data: one\n\n');
          finish = () => response.end('data: two\n\n');
        };
        const response = await create(ALLOW).fetch(`http://127.0.0.1:${sink.port}/stream`, { method: 'POST', body: '{}' });
        const reader = response.body!.getReader();
        const first = await reader.read();
        assert.equal(new TextDecoder().decode(first.value), 'data: one\n\n', 'the first event arrives before the server ends the answer');
        finish();
        let rest = '';
        for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += new TextDecoder().decode(chunk.value);
        assert.equal(rest, 'data: two\n\n');
      });

      it('aborts with the signal’s reason, mid-body too, and the server sees the connection close', async () => {
        let closed!: Promise<void>;
        sink.respond = (request, response) => {
          closed = new Promise((resolve) => request.socket.once('close', () => resolve()));
          response.writeHead(200);
          response.write('partial');
        };
        const controller = new AbortController();
        const response = await create(ALLOW).fetch(`http://127.0.0.1:${sink.port}/`, { signal: controller.signal });
        const reader = response.body!.getReader();
        await reader.read();
        controller.abort();
        await assert.rejects(reader.read(), (error: Error) => error.name === 'AbortError');
        await closed;

        const before = new AbortController();
        before.abort();
        await assert.rejects(create(ALLOW).fetch(`http://127.0.0.1:${sink.port}/`, { signal: before.signal }), (error: Error) => error.name === 'AbortError');
        assert.equal(sink.requests.length, 1);
      });

      it('rejects an unreachable destination as fetch does: TypeError with an HttpRequestError cause', async () => {
        await withSinkClosed(async (url) => assertFetchUnreachable(await create(ALLOW).fetch(url).catch((caught: unknown) => caught)));
      });

      it('follows a redirect after checking the new destination, and refuses one that leaves the allowed ones', async () => {
        const other = await startLoopbackSink();
        try {
          sink.respond = (request, response) => {
            if (request.url === '/moved') {
              response.writeHead(307, { location: `http://127.0.0.1:${other.port}/there` });
              response.end();
            } else if (request.url === '/see-other') {
              response.writeHead(303, { location: '/final' });
              response.end();
            } else {
              response.end('here');
            }
          };
          const init = { method: 'POST', headers: { authorization: 'Bearer k', 'x-api-key': 'k', 'content-type': 'text/plain' }, body: 'payload' };
          const followed = await create(ALLOW).fetch(`http://127.0.0.1:${sink.port}/moved`, init);
          assert.equal(followed.status, 200);
          assert.equal(followed.redirected, true);
          assert.equal(await followed.text(), 'ok');
          const [hop] = other.requests;
          assert.deepEqual({ method: hop!.method, body: hop!.body, type: hop!.headers['content-type'] }, { method: 'POST', body: 'payload', type: 'text/plain' });
          assert.equal(hop!.headers.authorization, undefined, 'no credential follows a redirect to another origin');
          assert.equal(hop!.headers['x-api-key'], undefined);

          const seeOther = await create(ALLOW).fetch(`http://127.0.0.1:${sink.port}/see-other`, init);
          assert.equal(await seeOther.text(), 'here');
          assert.deepEqual(sink.requests.at(-1)!.method, 'GET');

          const manual = await create(ALLOW).fetch(`http://127.0.0.1:${sink.port}/moved`, { redirect: 'manual' });
          assert.equal(manual.status, 307);

          const onlySink = create({ allowPrivateNetwork: false, allow: [`127.0.0.1:${sink.port}`] });
          await refusal(onlySink.fetch(`http://127.0.0.1:${sink.port}/moved`, init), 'loopback');
          assert.equal(other.requests.length, 1, 'the refused redirect sent nothing');
        } finally {
          await other.close();
        }
      });
    });

    describe('fetchWhole', () => {
      it('sends what fetch sends and answers the whole body, decoded, with status and lower-case headers', async () => {
        const answer = gzipSync('{"ok":true}');
        sink.respond = (_request, response) => {
          response.writeHead(201, 'Made', { 'content-type': 'application/json', 'X-Answer': 'yes', 'content-encoding': 'gzip', 'content-length': answer.length });
          response.end(answer);
        };
        const init = { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer k' }, body: '{"a":1}' };
        const whole = await create(ALLOW).fetchWhole(`http://127.0.0.1:${sink.port}/v1/chat?x=1`, init);
        assert.deepEqual(
          { ...whole, body: new TextDecoder().decode(whole.body), headers: { type: whole.headers['content-type'], answer: whole.headers['x-answer'], encoding: whole.headers['content-encoding'] } },
          { status: 201, statusText: 'Made', headers: { type: 'application/json', answer: 'yes', encoding: undefined }, body: '{"ok":true}', url: `http://127.0.0.1:${sink.port}/v1/chat?x=1` },
        );
        await create(ALLOW).fetch(`http://127.0.0.1:${sink.port}/v1/chat?x=1`, init);
        const [sentWhole, sentByFetch] = sink.requests.map(({ method, url, headers, body }) => ({ method, url, headers: { ...headers, connection: undefined }, body }));
        assert.deepEqual(sentWhole, sentByFetch);
      });

      it('follows redirects, refuses as fetch does, and rejects with the signal’s reason mid-body', async () => {
        sink.respond = (request, response) => {
          if (request.url === '/moved') {
            response.writeHead(307, { location: '/there' });
            response.end();
          } else if (request.url === '/partial') {
            response.writeHead(200);
            response.write('partial');
          } else {
            response.end('here');
          }
        };
        const moved = await create(ALLOW).fetchWhole(`http://127.0.0.1:${sink.port}/moved`);
        assert.deepEqual([new TextDecoder().decode(moved.body), moved.url], ['here', `http://127.0.0.1:${sink.port}/there`]);
        await refusal(create(GUARD).fetchWhole(`http://127.0.0.1:${sink.port}/`), 'loopback');
        const controller = new AbortController();
        const partial = create(ALLOW).fetchWhole(`http://127.0.0.1:${sink.port}/partial`, { signal: controller.signal });
        while (!sink.requests.some((request) => request.url === '/partial')) await new Promise((resolve) => setImmediate(resolve));
        controller.abort();
        await assert.rejects(partial, (error: Error) => error.name === 'AbortError');
      });

      it('rejects an unreachable destination and a body cut off as fetch does: TypeError with an HttpRequestError cause', async () => {
        sink.respond = (request, response) => {
          response.writeHead(200, { 'content-length': '100' });
          response.write('short');
          setImmediate(() => request.socket.destroy());
        };
        const cut = await create(ALLOW).fetchWhole(`http://127.0.0.1:${sink.port}/`).catch((caught: unknown) => caught);
        assert.ok(cut instanceof TypeError && cut.message === 'fetch failed' && cut.cause instanceof HttpRequestError, String(cut));
        await withSinkClosed(async (url) => assertFetchUnreachable(await create(ALLOW).fetchWhole(url).catch((caught: unknown) => caught)));
      });
    });

    it('checkDestination applies the policy without sending anything', async () => {
      await refusal(create(GUARD).checkDestination(`http://127.0.0.1:${sink.port}/`), 'loopback');
      await create(ALLOW).checkDestination(`http://127.0.0.1:${sink.port}/`);
      await create(GUARD).checkDestination('http://93.184.215.14/hook');
      assert.equal(sink.connections, 0);
    });
  });
}
