import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { EgressRefusedError, HttpRequestError } from '../../ports/http-client';
import { describeHttpClientContract, type LoopbackSink, startLoopbackSink } from '../http-client.contract';
import { GuardedHttpClient, type ResolvedAddress } from './guarded-http-client';

describeHttpClientContract('GuardedHttpClient', (egress) => new GuardedHttpClient({ egress }));

/** A DNS answer per call, in order (the last one repeats), recording the names asked. */
function scriptedResolver(...answers: ResolvedAddress[][]): { resolve: (hostname: string) => Promise<ResolvedAddress[]>; asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    resolve: async (hostname) => {
      asked.push(hostname);
      return answers[Math.min(asked.length, answers.length) - 1]!;
    },
  };
}

const PUBLIC: ResolvedAddress = { address: '93.184.215.14', family: 4 };
const LOOPBACK: ResolvedAddress = { address: '127.0.0.1', family: 4 };

describe('GuardedHttpClient', () => {
  let sink: LoopbackSink;
  beforeEach(async () => {
    sink = await startLoopbackSink();
  });
  afterEach(async () => {
    await sink.close();
  });

  it('refuses a name that answered public at the check and private at send time (DNS rebinding), before connecting', async () => {
    const dns = scriptedResolver([PUBLIC], [LOOPBACK]);
    const client = new GuardedHttpClient({ egress: { allowPrivateNetwork: false }, resolve: dns.resolve });
    await client.checkDestination(`http://rebind.test:${sink.port}/`);
    const error = await client.post({ url: `http://rebind.test:${sink.port}/`, body: 'x' }).catch((caught: unknown) => caught);
    assert.ok(error instanceof EgressRefusedError);
    assert.equal(error.address, '127.0.0.1');
    assert.deepEqual(dns.asked, ['rebind.test', 'rebind.test']);
    assert.equal(sink.connections, 0);
  });

  it('refuses a name when any one of its addresses is not public', async () => {
    const dns = scriptedResolver([PUBLIC, { address: '::ffff:169.254.169.254', family: 6 }]);
    const client = new GuardedHttpClient({ egress: { allowPrivateNetwork: false }, resolve: dns.resolve });
    const error = await client.post({ url: `http://mixed.test:${sink.port}/`, body: 'x' }).catch((caught: unknown) => caught);
    assert.ok(error instanceof EgressRefusedError);
    assert.equal(error.range, 'metadata');
    assert.equal(sink.connections, 0);
  });

  it('resolves once per request and connects to the address it checked, never re-resolving', async () => {
    // Were the name resolved again for the socket it would answer 127.0.0.2, where nothing listens.
    const dns = scriptedResolver([LOOPBACK], [{ address: '127.0.0.2', family: 4 }]);
    const client = new GuardedHttpClient({ egress: { allowPrivateNetwork: true }, resolve: dns.resolve });
    const response = await client.post({ url: `http://sink.test:${sink.port}/path`, body: 'hello' });
    assert.equal(response.status, 200);
    assert.deepEqual(dns.asked, ['sink.test']);
    assert.equal(sink.requests[0]?.headers.host, `sink.test:${sink.port}`, 'the Host header keeps the name');
  });

  it('never reuses a socket opened under the permissive policy for a guarded request', async () => {
    const dns = scriptedResolver([LOOPBACK]);
    const client = new GuardedHttpClient({ egress: { allowPrivateNetwork: true }, resolve: dns.resolve });
    assert.equal((await client.post({ url: `http://sink.test:${sink.port}/`, body: 'x' })).status, 200);
    const error = await client.post({ url: `http://sink.test:${sink.port}/`, body: 'x', egress: { allowPrivateNetwork: false } }).catch((caught: unknown) => caught);
    assert.ok(error instanceof EgressRefusedError);
    assert.equal(sink.requests.length, 1);
  });

  it('fetch resolves once, connects to the checked address and keeps the name in the Host header', async () => {
    const dns = scriptedResolver([LOOPBACK], [{ address: '127.0.0.2', family: 4 }]);
    const client = new GuardedHttpClient({ egress: { allowPrivateNetwork: false, allow: [`vendor.test:${sink.port}`] }, resolve: dns.resolve });
    const response = await client.fetch(`http://vendor.test:${sink.port}/v1/chat`, { method: 'POST', body: '{}' });
    assert.equal(await response.text(), 'ok');
    assert.deepEqual(dns.asked, ['vendor.test']);
    assert.equal(sink.requests[0]?.headers.host, `vendor.test:${sink.port}`);
  });

  it('resolves and checks a name once per connection: a request on a kept-alive connection goes to the address checked when it opened', async () => {
    // Were the name resolved again it would answer a refused address.
    const dns = scriptedResolver([LOOPBACK], [{ address: '10.0.0.1', family: 4 }]);
    const client = new GuardedHttpClient({ egress: { allowPrivateNetwork: false, allow: [`127.0.0.1:${sink.port}`] }, resolve: dns.resolve });
    for (let turn = 0; turn < 3; turn += 1) {
      assert.equal(new TextDecoder().decode((await client.fetchWhole(`http://vendor.test:${sink.port}/v1/chat`, { method: 'POST', body: '{}' })).body), 'ok');
      assert.equal((await client.post({ url: `http://vendor.test:${sink.port}/hook`, body: 'x' })).status, 200);
    }
    assert.deepEqual(dns.asked, ['vendor.test']);
    assert.equal(sink.connections, 1);
  });

  it('never reuses a connection checked under one allow list for a request under another', async () => {
    const dns = scriptedResolver([LOOPBACK]);
    const client = new GuardedHttpClient({ egress: { allowPrivateNetwork: false, allow: [`vendor.test:${sink.port}`] }, resolve: dns.resolve });
    assert.equal((await client.post({ url: `http://vendor.test:${sink.port}/`, body: 'x' })).status, 200);
    const error = await client.post({ url: `http://vendor.test:${sink.port}/`, body: 'x', egress: { allowPrivateNetwork: false } }).catch((caught: unknown) => caught);
    assert.ok(error instanceof EgressRefusedError);
    assert.equal(sink.requests.length, 1);
    assert.deepEqual(dns.asked, ['vendor.test', 'vendor.test']);
  });

  it('fetch refuses a name that re-resolves to a refused address (DNS rebinding), sending nothing', async () => {
    const dns = scriptedResolver([PUBLIC], [LOOPBACK]);
    const client = new GuardedHttpClient({ egress: { allowPrivateNetwork: false }, resolve: dns.resolve });
    await client.checkDestination(`http://vendor.test:${sink.port}/v1`);
    const error = await client.fetch(`http://vendor.test:${sink.port}/v1/chat`, { method: 'POST', body: '{}' }).catch((caught: unknown) => caught);
    assert.ok(error instanceof EgressRefusedError);
    assert.match(error.message, new RegExp(`vendor\\.test resolves to 127\\.0\\.0\\.1, a loopback address.*--egress-allow vendor\\.test:${sink.port}`));
    assert.equal(sink.connections, 0);
  });

  it('a name allow entry never opens a cloud metadata address; an entry naming the address does', async () => {
    const metadata = scriptedResolver([{ address: '169.254.169.254', family: 4 }]);
    const byName = new GuardedHttpClient({ egress: { allowPrivateNetwork: false, allow: ['llm.lan'] }, resolve: metadata.resolve });
    const error = await byName.checkDestination('http://llm.lan/').catch((caught: unknown) => caught);
    assert.ok(error instanceof EgressRefusedError);
    assert.equal(error.range, 'metadata');
    assert.equal(error.allowEntry, '169.254.169.254:80');
    const byAddress = new GuardedHttpClient({ egress: { allowPrivateNetwork: false, allow: ['169.254.169.254:80'] }, resolve: metadata.resolve });
    await byAddress.checkDestination('http://llm.lan/');
  });

  it('fetch sends what a web Request of the same arguments holds: method, headers, text or byte body, content type', async () => {
    const client = new GuardedHttpClient({ egress: { allowPrivateNetwork: true } });
    const url = `http://127.0.0.1:${sink.port}/v1/chat`;
    const calls: [string | URL | Request, RequestInit][] = [
      [url, { method: 'post', headers: { 'Content-Type': 'application/json', Authorization: 'Bearer k' }, body: '{"é":1}' }],
      [new URL(url), { method: 'put', body: 'plain text' }],
      [url, { method: 'PATCH', headers: [['X-Tag', 'a']], body: new Uint8Array([104, 105]) }],
      [new Request(url, { method: 'POST', headers: new Headers({ 'x-from': 'request' }), body: 'in a request' }), {}],
      [url, {}],
    ];
    for (const [input, init] of calls) assert.equal(await (await client.fetch(input, init)).text(), 'ok');
    const sent = sink.requests.map(({ method, headers, body }) => ({ method, type: headers['content-type'], auth: headers.authorization, tag: headers['x-tag'], from: headers['x-from'], body }));
    assert.deepEqual(sent, [
      { method: 'POST', type: 'application/json', auth: 'Bearer k', tag: undefined, from: undefined, body: '{"é":1}' },
      { method: 'PUT', type: 'text/plain;charset=UTF-8', auth: undefined, tag: undefined, from: undefined, body: 'plain text' },
      { method: 'PATCH', type: undefined, auth: undefined, tag: 'a', from: undefined, body: 'hi' },
      { method: 'POST', type: 'text/plain;charset=UTF-8', auth: undefined, tag: undefined, from: 'request', body: 'in a request' },
      { method: 'GET', type: undefined, auth: undefined, tag: undefined, from: undefined, body: '' },
    ]);
    await assert.rejects(client.fetch(url, { method: 'GET', body: 'not allowed' }), TypeError);
  });

  it('fetch decodes a gzip body as fetch does', async () => {
    sink.respond = (_request, response) => {
      response.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'application/json' });
      response.end(zlib.gzipSync('{"zipped":true}'));
    };
    const response = await new GuardedHttpClient({ egress: { allowPrivateNetwork: true } }).fetch(`http://127.0.0.1:${sink.port}/`);
    assert.equal(response.headers.get('content-encoding'), null);
    assert.deepEqual(await response.json(), { zipped: true });
    assert.match(String(sink.requests[0]?.headers['accept-encoding']), /gzip/);
  });

  it('fetch hands the body over one chunk per socket read: HTTP chunks written together arrive joined, in order', async () => {
    const events = Array.from({ length: 500 }, (_, index) => `data: ${index}\n\n`);
    sink.respond = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      // One socket write of 500 HTTP chunks, as a vendor streaming events as fast as it can sends them.
      response.cork();
      for (const event of events) response.write(event);
      response.uncork();
      response.end();
    };
    const response = await new GuardedHttpClient({ egress: { allowPrivateNetwork: true } }).fetch(`http://127.0.0.1:${sink.port}/`);
    const chunks: Uint8Array[] = [];
    const reader = response.body!.getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) chunks.push(read.value);
    assert.equal(Buffer.concat(chunks).toString('utf8'), events.join(''));
    assert.ok(chunks.length < events.length / 10, `${chunks.length} body chunks for one write of ${events.length} HTTP chunks`);
  });

  it('fetch reads a body larger than its queue whole, and errors the body of a connection cut mid-answer', async () => {
    const large = Buffer.alloc(4 * 1024 * 1024, 'x');
    sink.respond = (request, response) => {
      response.writeHead(200, { 'content-type': 'application/octet-stream' });
      if (request.url === '/cut') {
        response.write('a partial answer');
        setImmediate(() => response.destroy());
      } else {
        response.end(large);
      }
    };
    const client = new GuardedHttpClient({ egress: { allowPrivateNetwork: true } });
    const whole = await client.fetch(`http://127.0.0.1:${sink.port}/large`);
    assert.equal(Buffer.from(await whole.arrayBuffer()).equals(large), true);
    const cut = await client.fetch(`http://127.0.0.1:${sink.port}/cut`);
    await assert.rejects(cut.text());
  });

  it('reports a name that does not resolve as kind dns', async () => {
    const client = new GuardedHttpClient({
      egress: { allowPrivateNetwork: false },
      resolve: async () => {
        throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.test'), { code: 'ENOTFOUND' });
      },
    });
    const error = await client.checkDestination('https://nowhere.test/').catch((caught: unknown) => caught);
    assert.ok(error instanceof HttpRequestError);
    assert.equal(error.kind, 'dns');
    assert.match(error.message, /nowhere\.test could not be resolved \(ENOTFOUND\)/);
  });

  it('times out a resolver that never answers', async () => {
    const client = new GuardedHttpClient({ egress: { allowPrivateNetwork: false }, resolve: () => new Promise(() => undefined) });
    const error = await client.post({ url: 'http://slow-dns.test/', body: 'x', timeoutMs: 100 }).catch((caught: unknown) => caught);
    assert.ok(error instanceof HttpRequestError);
    assert.equal(error.kind, 'timeout');
  });

  it('refuses a header value with a line break as kind invalid_request', async () => {
    const client = new GuardedHttpClient({ egress: { allowPrivateNetwork: true } });
    const error = await client
      .post({ url: `http://127.0.0.1:${sink.port}/`, headers: { 'x-bad': 'a\r\nInjected: 1' }, body: 'x' })
      .catch((caught: unknown) => caught);
    assert.ok(error instanceof HttpRequestError);
    assert.equal(error.kind, 'invalid_request');
    assert.equal(sink.requests.length, 0);
  });
});
