import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { ContainerModule } from 'inversify';
import { base64url, createLocalJWKSet, decodeJwt, decodeProtectedHeader, generateKeyPair, jwtVerify, SignJWT } from 'jose';
import * as oauth from 'oauth4webapi';
import { createRunloom, Database, RouteTable, route, SecretBox } from '../packages/core/src/index';
import { createRequestListener } from '../packages/server-adapter/src/index';
import { ManualClock } from '../packages/core/src/testing/manual-clock';
import { startTestRunloom, TEST_ORIGIN, type TestRunloom } from './support/harness';

/** A route that answers with the request's principal: shows what the router carries. */
const whoamiModule = new ContainerModule(({ bind }) => {
  bind(RouteTable).toConstantValue([
    route({
      method: 'GET',
      path: '/test/whoami',
      tag: 'test',
      summary: 'the caller',
      hidden: true,
      responses: { 200: { description: 'the principal' } },
      handle: async ({ principal }) => ({ status: 200, body: principal }),
    }),
  ]);
});

const BOOTSTRAP_SECRET = 'b00t:secret+with%odd chars';

function post(body: string, headers: Record<string, string>): Request {
  return new Request(`${TEST_ORIGIN}/auth/token`, { method: 'POST', body, headers });
}
const json = (value: unknown, headers: Record<string, string> = {}) =>
  post(JSON.stringify(value), { 'content-type': 'application/json', ...headers });
const form = (value: string, headers: Record<string, string> = {}) =>
  post(value, { 'content-type': 'application/x-www-form-urlencoded', ...headers });
/** RFC 6749 §2.3.1: each part form-urlencoded, then base64. */
const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${new URLSearchParams({ a: id }).toString().slice(2)}:${new URLSearchParams({ a: secret }).toString().slice(2)}`).toString('base64')}`;

async function oauthError(response: Response, status: number, error: string): Promise<{ error: string; error_description: string }> {
  const text = await response.text();
  assert.equal(response.status, status, text);
  const body = JSON.parse(text) as { error: string; error_description: string };
  assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description']);
  assert.equal(body.error, error);
  assert.ok(body.error_description.length > 0);
  assert.equal(response.headers.get('cache-control'), 'no-store');
  return body;
}

describe('auth', () => {
  let harness: TestRunloom;
  let client: { client_id: string; client_secret: string };
  const handle = (request: Request) => harness.runloom.handle(request);

  before(async () => {
    harness = await startTestRunloom({ modules: [whoamiModule], bootstrapClients: [`acct-boot:boot-client:${BOOTSTRAP_SECRET}`] });
    client = await harness.runloom.auth.createClient('acct-t');
  });
  after(() => harness.close());

  const whoami = (token: string) => handle(new Request(`${TEST_ORIGIN}/test/whoami`, { headers: { authorization: `Bearer ${token}` } }));

  describe('POST /auth/token', () => {
    const grant = () => ({ grant_type: 'client_credentials', ...client });

    it('issues a Bearer JWT for a JSON body, not cacheable, that authenticates as the client’s account', async () => {
      const response = await handle(json(grant()));
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('cache-control'), 'no-store');
      assert.equal(response.headers.get('pragma'), 'no-cache');
      assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
      const body = (await response.json()) as { access_token: string; token_type: string; expires_in: number };
      assert.deepEqual(Object.keys(body).sort(), ['access_token', 'expires_in', 'token_type']);
      assert.equal(body.token_type, 'Bearer');
      assert.equal(body.expires_in, 3600);
      const claims = decodeJwt(body.access_token);
      assert.equal(claims.exp! - claims.iat!, 3600);
      assert.deepEqual(await (await whoami(body.access_token)).json(), { accountId: 'acct-t', clientId: client.client_id });
    });

    it('accepts a form-encoded body', async () => {
      const response = await handle(form(new URLSearchParams(grant()).toString()));
      assert.equal(response.status, 200);
      assert.equal(((await response.json()) as { token_type: string }).token_type, 'Bearer');
    });

    it('accepts HTTP Basic client authentication with form-urlencoded id and secret', async () => {
      const response = await handle(form('grant_type=client_credentials', { authorization: basic('boot-client', BOOTSTRAP_SECRET) }));
      assert.equal(response.status, 200);
      const { access_token } = (await response.json()) as { access_token: string };
      assert.deepEqual(await (await whoami(access_token)).json(), { accountId: 'acct-boot', clientId: 'boot-client' });
      const jsonWithBasic = await handle(json({ grant_type: 'client_credentials' }, { authorization: basic(client.client_id, client.client_secret) }));
      assert.equal(jsonWithBasic.status, 200);
    });

    it('answers 400 invalid_request for a missing grant_type or a malformed body', async () => {
      const { grant_type: _omitted, ...withoutGrant } = grant();
      await oauthError(await handle(json(withoutGrant)), 400, 'invalid_request');
      await oauthError(await handle(form(new URLSearchParams(withoutGrant).toString())), 400, 'invalid_request');
      await oauthError(await handle(post('{"grant_type": "client_credentials",', { 'content-type': 'application/json' })), 400, 'invalid_request');
      await oauthError(await handle(json([grant()])), 400, 'invalid_request');
      await oauthError(await handle(post('', { 'content-type': 'application/json' })), 400, 'invalid_request');
      await oauthError(await handle(json({ ...grant(), client_id: 42 })), 400, 'invalid_request');
      await oauthError(await handle(form(`${new URLSearchParams(grant())}&grant_type=client_credentials`)), 400, 'invalid_request');
      const twoWays = await oauthError(
        await handle(json(grant(), { authorization: basic(client.client_id, client.client_secret) })),
        400,
        'invalid_request',
      );
      assert.match(twoWays.error_description, /one way/);
    });

    it('answers 400 unsupported_grant_type for another grant', async () => {
      for (const grantType of ['password', 'authorization_code', 'refresh_token']) {
        const body = await oauthError(await handle(json({ ...grant(), grant_type: grantType })), 400, 'unsupported_grant_type');
        assert.match(body.error_description, /client_credentials/);
      }
    });

    it('answers 401 invalid_client with a Basic challenge for missing, unknown or wrong credentials', async () => {
      const cases: Request[] = [
        json({ grant_type: 'client_credentials' }),
        json({ grant_type: 'client_credentials', client_id: client.client_id }),
        json({ ...grant(), client_secret: `${client.client_secret}x` }),
        json({ ...grant(), client_id: 'rlc_nobody' }),
        form('grant_type=client_credentials', { authorization: basic(client.client_id, 'wrong') }),
        form('grant_type=client_credentials', { authorization: 'Basic !!!not-base64' }),
        form('grant_type=client_credentials', { authorization: `Basic ${Buffer.from('no-colon').toString('base64')}` }),
      ];
      for (const request of cases) {
        const response = await handle(request);
        const body = await oauthError(response, 401, 'invalid_client');
        assert.match(response.headers.get('www-authenticate') ?? '', /^Basic realm="runloom"/);
        assert.ok(!body.error_description.includes(client.client_secret));
      }
    });

    it('answers 415 for a body that is neither JSON nor form-encoded', async () => {
      const response = await handle(post('grant_type=client_credentials', { 'content-type': 'text/plain' }));
      assert.equal(response.status, 415);
      assert.equal(typeof ((await response.json()) as { error: unknown }).error, 'string');
    });
  });

  describe('GET /.well-known/jwks.json', () => {
    it('serves the public keys, without a bearer, and they verify issued tokens', async () => {
      const response = await handle(new Request(`${TEST_ORIGIN}/.well-known/jwks.json`));
      assert.equal(response.status, 200);
      const jwks = (await response.json()) as { keys: Record<string, string>[] };
      assert.equal(jwks.keys.length, 1);
      const [key] = jwks.keys;
      assert.deepEqual({ kty: key!.kty, crv: key!.crv, alg: key!.alg, use: key!.use }, { kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
      assert.equal(key!.d, undefined);
      const token = await harness.token('acct-jwks');
      assert.equal(decodeProtectedHeader(token).kid, key!.kid);
      const { payload } = await jwtVerify(token, createLocalJWKSet(jwks as never), { algorithms: ['EdDSA'] });
      assert.equal(payload.account_id, 'acct-jwks');
    });
  });

  describe('bearer authentication', () => {
    const bearer = (token: string) => `Bearer ${token}`;

    async function unauthorized(authorization: string | undefined, reason?: RegExp): Promise<void> {
      const headers: Record<string, string> = authorization === undefined ? {} : { authorization };
      const response = await handle(new Request(`${TEST_ORIGIN}/v1/runnables`, { headers }));
      const text = await response.text();
      assert.equal(response.status, 401, `${authorization}: ${text}`);
      assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer realm="runloom"/);
      const body = JSON.parse(text) as { error: string };
      assert.equal(typeof body.error, 'string');
      if (reason) assert.match(body.error, reason);
    }

    it('serves a protected route to a valid token, the scheme name in any case', async () => {
      assert.equal((await harness.request('/v1/runnables')).status, 200);
      const token = await harness.token();
      for (const authorization of [`bearer ${token}`, `BEARER  ${token}`]) {
        assert.equal((await handle(new Request(`${TEST_ORIGIN}/v1/runnables`, { headers: { authorization } }))).status, 200);
      }
    });

    it('refuses missing, wrong-scheme, empty and malformed credentials', async () => {
      await unauthorized(undefined, /Authorization: Bearer/);
      await unauthorized(basic(client.client_id, client.client_secret), /Bearer scheme/);
      await unauthorized('Bearer', /empty/);
      await unauthorized('Bearer not.a.jwt', /well-formed/);
    });

    it('refuses forged, alg none and wrong-algorithm tokens, naming the fault in the challenge', async () => {
      const token = await harness.token();
      const [header, payload] = token.split('.') as [string, string];
      const { kid } = decodeProtectedHeader(token);
      const claims = decodeJwt(token);
      const foreign = await generateKeyPair('EdDSA');
      await unauthorized(bearer(await new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA', kid }).sign(foreign.privateKey)), /signature/);
      await unauthorized(bearer(`${base64url.encode(JSON.stringify({ alg: 'none', kid }))}.${payload}.`), /EdDSA/);
      // Key confusion: an HMAC keyed with the public key must not pass as a signature.
      const jwks = (await (await handle(new Request(`${TEST_ORIGIN}/.well-known/jwks.json`))).json()) as { keys: { x: string }[] };
      const hmac = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid }).sign(base64url.decode(jwks.keys[0]!.x));
      await unauthorized(bearer(hmac), /EdDSA/);
      const tampered = `${header}.${base64url.encode(JSON.stringify({ ...claims, account_id: 'acct-other' }))}.${token.split('.')[2]}`;
      await unauthorized(bearer(tampered), /signature/);
      const response = await handle(new Request(`${TEST_ORIGIN}/v1/runnables`, { headers: { authorization: bearer(tampered) } }));
      assert.match(response.headers.get('www-authenticate') ?? '', /error="invalid_token", error_description="the token signature is invalid"/);
    });

    it('puts each account on its own requests', async () => {
      for (const account of ['acct-one', 'acct-two']) {
        const body = (await (await harness.request('/test/whoami', { account })).json()) as { accountId: string };
        assert.equal(body.accountId, account);
      }
    });
  });

  describe('secrets at rest', () => {
    it('stores no client secret and no private key in plaintext', async () => {
      const database = harness.runloom.container.get<Database>(Database);
      const [signingKey] = await database.find('signing_keys');
      const secretBox = await harness.runloom.container.getAsync<SecretBox>(SecretBox);
      const { d } = JSON.parse(await secretBox.open(String(signingKey?.private_jwk_sealed))) as { d: string };
      const forbidden = [client.client_secret, BOOTSTRAP_SECRET, d];
      const documents = JSON.stringify([await database.find('clients'), await database.find('signing_keys')]);
      const files = fs.readdirSync(harness.dataDir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
      const raw = files.map((entry) => fs.readFileSync(path.join(entry.parentPath, entry.name)).toString('latin1'));
      for (const value of forbidden) {
        assert.ok(!documents.includes(value));
        for (const content of raw) assert.ok(!content.includes(value));
      }
    });
  });

  describe('with a standard OAuth2 client (oauth4webapi) over loopback HTTP', () => {
    let server: http.Server;
    let issuer: string;
    before(async () => {
      server = http.createServer(createRequestListener(harness.runloom));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));

    for (const [method, clientAuth] of [
      ['client_secret_basic', oauth.ClientSecretBasic],
      ['client_secret_post', oauth.ClientSecretPost],
    ] as const) {
      it(`gets a token with ${method} and calls a protected route with it`, async () => {
        const authorizationServer: oauth.AuthorizationServer = { issuer, token_endpoint: `${issuer}/auth/token` };
        const oauthClient: oauth.Client = { client_id: 'boot-client' };
        const response = await oauth.clientCredentialsGrantRequest(authorizationServer, oauthClient, clientAuth(BOOTSTRAP_SECRET), new URLSearchParams(), {
          [oauth.allowInsecureRequests]: true,
        });
        const result = await oauth.processClientCredentialsResponse(authorizationServer, oauthClient, response);
        assert.equal(result.token_type, 'bearer');
        assert.equal(result.expires_in, 3600);
        const resource = await oauth.protectedResourceRequest(result.access_token, 'GET', new URL(`${issuer}/test/whoami`), undefined, undefined, {
          [oauth.allowInsecureRequests]: true,
        });
        assert.deepEqual(await resource.json(), { accountId: 'acct-boot', clientId: 'boot-client' });
      });
    }

    it('surfaces invalid_client to the library for a wrong secret', async () => {
      const authorizationServer: oauth.AuthorizationServer = { issuer, token_endpoint: `${issuer}/auth/token` };
      const oauthClient: oauth.Client = { client_id: 'boot-client' };
      const response = await oauth.clientCredentialsGrantRequest(authorizationServer, oauthClient, oauth.ClientSecretBasic('wrong'), new URLSearchParams(), {
        [oauth.allowInsecureRequests]: true,
      });
      const refusal = await oauth.processClientCredentialsResponse(authorizationServer, oauthClient, response).then(
        () => assert.fail('a wrong secret must be refused'),
        (error: unknown) => error,
      );
      // The 401's Basic challenge is what the library reports first; the body still says invalid_client.
      assert.ok(refusal instanceof oauth.WWWAuthenticateChallengeError);
      assert.equal(refusal.status, 401);
      assert.equal(refusal.cause[0]?.scheme, 'basic');
      assert.equal(((await refusal.response.json()) as { error: string }).error, 'invalid_client');
    });
  });
});

describe('auth across time and restarts', () => {
  it('refuses a token once it has expired, with an invalid_token challenge', async () => {
    const clock = new ManualClock();
    const harness = await startTestRunloom({ tokenTtlSeconds: 60, clock });
    try {
      const token = await harness.token();
      assert.equal((await harness.request('/v1/runnables')).status, 200);
      await clock.advance(60_000);
      const response = await harness.runloom.handle(new Request(`${TEST_ORIGIN}/v1/runnables`, { headers: { authorization: `Bearer ${token}` } }));
      assert.equal(response.status, 401);
      assert.match(((await response.json()) as { error: string }).error, /expired/);
      assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer realm="runloom", error="invalid_token"/);
    } finally {
      await harness.close();
    }
  });

  it('keeps the signing key and clients across a restart: a token from before still verifies', async () => {
    const harness = await startTestRunloom({ bootstrapClients: ['acct-p:persist-client:persist-secret'] });
    try {
      const token = await harness.token();
      const before = (await harness.runloom.auth.issueToken({ grant_type: 'client_credentials', client_id: 'persist-client', client_secret: 'persist-secret' })).access_token;
      await harness.restart();
      assert.equal((await harness.runloom.auth.verify(token)).accountId, 'acct-a');
      assert.equal((await harness.runloom.auth.verify(before)).accountId, 'acct-p');
      const after = await harness.runloom.auth.issueToken({ grant_type: 'client_credentials', client_id: 'persist-client', client_secret: 'persist-secret' });
      assert.equal(decodeProtectedHeader(after.access_token).kid, decodeProtectedHeader(before).kid);
    } finally {
      await harness.close();
    }
  });

  it('hashes client secrets at the production scrypt cost outside the test harness', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-'));
    try {
      const runloom = await createRunloom({ dataDir, bootstrapClients: ['acct-h:hash-client:hash-secret'] });
      const stored = await runloom.container.get<Database>(Database).get('clients', 'hash-client');
      await runloom.close();
      assert.match(String(stored?.secret_hash), /^\$scrypt\$ln=15,r=8,p=1\$/);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('refuses to start with an invalid bootstrap client, without echoing its secret', async () => {
    await assert.rejects(startTestRunloom({ bootstrapClients: ['acct-x:only-two-parts'] }), /bootstrap client #1 is invalid: expected ACCOUNT:CLIENT_ID:SECRET/);
    await assert.rejects(
      startTestRunloom({ bootstrapClients: ['acct x:client:very-secret-value'] }),
      (error: Error) => /bootstrap client 'client' of account 'acct x': account id must be/.test(error.message) && !error.message.includes('very-secret-value'),
    );
  });
});

describe('token endpoint throttling (POST /auth/token)', () => {
  /** A controllable clock: the throttle's windows advance only when the test says so. */
  let clock: ManualClock;
  let harness: TestRunloom;
  let client: { client_id: string; client_secret: string };
  const attacker = { remoteAddress: '198.51.100.7' };
  const realClient = { remoteAddress: '203.0.113.20' };
  const tokenRequest = (clientId: string, secret: string) => json({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret });

  beforeEach(async () => {
    clock = new ManualClock(Date.UTC(2030, 0, 1));
    harness = await startTestRunloom({ clock });
    client = await harness.runloom.auth.createClient('acct-throttle');
  });

  afterEach(async () => {
    await harness.close();
  });

  async function throttled(response: Response): Promise<number> {
    await oauthError(response, 429, 'slow_down');
    const retryAfter = Number(response.headers.get('retry-after'));
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${response.headers.get('retry-after')}`);
    return retryAfter;
  }

  it('answers 429 with Retry-After ≤ 60 s after repeated wrong secrets, even to the right one, which works again once it has passed', async () => {
    const statuses: number[] = [];
    for (let index = 0; index < 6; index += 1) statuses.push((await harness.runloom.handle(tokenRequest(client.client_id, `wrong-${index}`), attacker)).status);
    assert.deepEqual(statuses, [401, 401, 401, 401, 401, 401]);
    const retryAfter = await throttled(await harness.runloom.handle(tokenRequest(client.client_id, client.client_secret), attacker));
    await clock.advance(retryAfter * 1000);
    assert.equal((await harness.runloom.handle(tokenRequest(client.client_id, client.client_secret), attacker)).status, 200);
  });

  it('turns 520 wrong secrets in a row into 429s, never waiting more than 60 s, while the right secret keeps working from another address', async () => {
    const statuses = new Map<number, number>();
    let longest = 0;
    for (let index = 0; index < 520; index += 1) {
      const response = await harness.runloom.handle(tokenRequest(client.client_id, `guess-${index}`), attacker);
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      if (response.status === 429) longest = Math.max(longest, Number(response.headers.get('retry-after')));
      await response.body?.cancel();
      if (index % 100 === 0) assert.equal((await harness.runloom.handle(tokenRequest(client.client_id, client.client_secret), realClient)).status, 200);
    }
    assert.deepEqual([...statuses.keys()].sort(), [401, 429]);
    assert.equal(statuses.get(401), 6);
    assert.ok(longest <= 60);
    assert.equal((await harness.runloom.handle(tokenRequest(client.client_id, client.client_secret), realClient)).status, 200);
  });

  it('serves 30 concurrent requests with the right secret from one address, and checks 30 concurrent guesses no more than 6 in a row would be', async () => {
    const answers = await Promise.all(
      Array.from({ length: 30 }, () => harness.runloom.handle(tokenRequest(client.client_id, client.client_secret), attacker)),
    );
    assert.deepEqual(answers.map((response) => response.status), Array<number>(30).fill(200));
    const guesses = await Promise.all(
      Array.from({ length: 30 }, (_, index) => harness.runloom.handle(tokenRequest(client.client_id, `guess-${index}`), attacker)),
    );
    const statuses = guesses.map((response) => response.status);
    assert.equal(statuses.filter((status) => status === 401).length, 6, `statuses ${statuses.join(' ')}`);
    assert.equal(statuses.filter((status) => status === 429).length, 24);
    await throttled(await harness.runloom.handle(tokenRequest(client.client_id, client.client_secret), attacker));
  });

  it('limits one address across client ids: after 20 failures over many ids, every id from it waits, other addresses do not', async () => {
    for (let index = 0; index <= 20; index += 1) {
      assert.equal((await harness.runloom.handle(tokenRequest(`rlc_guess_${index}`, 'wrong'), attacker)).status, 401);
    }
    const retryAfter = await throttled(await harness.runloom.handle(tokenRequest(client.client_id, client.client_secret), attacker));
    assert.equal((await harness.runloom.handle(tokenRequest(client.client_id, client.client_secret), realClient)).status, 200);
    await clock.advance(retryAfter * 1000);
    assert.equal((await harness.runloom.handle(tokenRequest(client.client_id, client.client_secret), attacker)).status, 200);
  });

  it('throttles by the socket peer over real HTTP and ignores X-Forwarded-For unless the mount trusts the proxy', async () => {
    const listen = async (trustProxy: boolean): Promise<{ url: string; server: http.Server }> => {
      const server = http.createServer(createRequestListener(harness.runloom, { trustProxy }));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/auth/token`, server };
    };
    const direct = await listen(false);
    const proxied = await listen(true);
    try {
      const send = (url: string, secret: string, forwardedFor: string) =>
        fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor },
          body: JSON.stringify({ grant_type: 'client_credentials', client_id: client.client_id, client_secret: secret }),
        });
      // A different X-Forwarded-For on each request does not make the same peer look like many.
      for (let index = 0; index < 6; index += 1) assert.equal((await send(direct.url, 'wrong', `192.0.2.${index}`)).status, 401);
      await throttled(await send(direct.url, client.client_secret, '192.0.2.99'));
      // Behind a trusted proxy, the last X-Forwarded-For entry is the client: a spoofed first entry does not count.
      for (let index = 0; index < 6; index += 1) assert.equal((await send(proxied.url, 'wrong', `10.9.9.${index}, 198.51.100.50`)).status, 401);
      await throttled(await send(proxied.url, client.client_secret, '10.9.9.99, 198.51.100.50'));
      assert.equal((await send(proxied.url, client.client_secret, '198.51.100.51')).status, 200);
    } finally {
      for (const { server } of [direct, proxied]) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    }
  });
});
