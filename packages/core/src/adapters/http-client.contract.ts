import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { EgressRefusedError, type EgressPolicy, type HttpClient, HttpRequestError } from '../ports/http-client';

/** A loopback server whose behaviour each test sets, counting the connections it accepts. */
export interface LoopbackSink {
  port: number;
  connections: number;
  requests: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[];
  respond: (request: http.IncomingMessage, response: http.ServerResponse) => void;
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
  const server = http.createServer((request, response) => {
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
      const started = Date.now();
      assert.equal(await failureKind(create(ALLOW).post({ url: `http://127.0.0.1:${sink.port}/`, body: 'x', timeoutMs: 200 })), 'timeout');
      assert.ok(Date.now() - started < 2000);
    });

    it('stops with kind aborted when the caller’s signal aborts', async () => {
      sink.respond = () => undefined;
      const controller = new AbortController();
      const pending = create(ALLOW).post({ url: `http://127.0.0.1:${sink.port}/`, body: 'x', signal: controller.signal });
      setTimeout(() => controller.abort(), 50);
      assert.equal(await failureKind(pending), 'aborted');
    });

    it('reports a refused connection as kind network', async () => {
      const port = sink.port;
      await sink.close();
      assert.equal(await failureKind(create(ALLOW).post({ url: `http://127.0.0.1:${port}/`, body: 'x' })), 'network');
      sink = await startLoopbackSink();
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
      ];
      for (const [host, range] of cases) {
        await refusal(client.post({ url: `http://${host}:${sink.port}/`, body: 'x' }), range);
        await refusal(client.checkDestination(`https://${host}/`), range);
      }
      assert.equal(sink.connections, 0);
    });

    it('checkDestination applies the policy without sending anything', async () => {
      await refusal(create(GUARD).checkDestination(`http://127.0.0.1:${sink.port}/`), 'loopback');
      await create(ALLOW).checkDestination(`http://127.0.0.1:${sink.port}/`);
      await create(GUARD).checkDestination('http://93.184.215.14/hook');
      assert.equal(sink.connections, 0);
    });
  });
}
