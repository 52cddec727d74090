import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { Database } from '../packages/core/src/index';
import { startTestRunloom, type TestRunloom } from './support/harness';

const SECRET_FORMAT = /^whsec_[A-Za-z0-9+/]+={0,2}$/;

async function readSecret(app: TestRunloom, method: 'GET' | 'POST', account?: string): Promise<string> {
  const response = await app.request(method === 'GET' ? '/v1/webhook-secret' : '/v1/webhook-secret/rotate', { method, account });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('cache-control'), 'no-store');
  const body = (await response.json()) as { secret: string };
  assert.deepEqual(Object.keys(body), ['secret']);
  return body.secret;
}

describe('webhook secret (HTTP)', () => {
  // One instance for the file: tokens are slow to mint, and each test reads fresh state anyway.
  let app: TestRunloom;

  before(async () => {
    app = await startTestRunloom();
  });

  after(async () => {
    await app.close();
  });

  it('creates a Standard Webhooks secret on first read and answers the same one afterwards', async () => {
    const secret = await readSecret(app, 'GET');
    assert.match(secret, SECRET_FORMAT);
    const keyBytes = Buffer.from(secret.slice('whsec_'.length), 'base64').length;
    assert.ok(keyBytes >= 24 && keyBytes <= 64, `key of ${keyBytes} bytes`);
    assert.equal(await readSecret(app, 'GET'), secret);
    assert.equal(await app.runloom.webhooks.get('acct-a'), secret, 'signing reads the same secret');
  });

  it('signs in a way the standardwebhooks verifier accepts', async () => {
    const secret = await readSecret(app, 'GET');
    const id = 'msg_2Lb7h1wN2Jk';
    const timestamp = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({ type: 'run.completed', timestamp: new Date().toISOString(), data: { id: 'r1' } });
    // docs/api.md#callbacks: v1,BASE64(HMAC-SHA256(secret, "id.timestamp.body")), the key being the base64 after whsec_.
    const signature = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
      .update(`${id}.${timestamp}.${body}`)
      .digest('base64');
    const headers = { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': `v1,${signature}` };
    assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
  });

  it('rotates to a new secret that every later read answers', async () => {
    const before = await readSecret(app, 'GET');
    const rotated = await readSecret(app, 'POST');
    assert.match(rotated, SECRET_FORMAT);
    assert.notEqual(rotated, before);
    assert.equal(await readSecret(app, 'GET'), rotated);
    assert.equal(await app.runloom.webhooks.get('acct-a'), rotated);
    const again = await readSecret(app, 'POST');
    assert.notEqual(again, rotated);
  });

  it('rotates an account that never read its secret', async () => {
    const rotated = await app.runloom.webhooks.rotate('acct-never-read');
    assert.match(rotated, SECRET_FORMAT);
    assert.equal(await app.runloom.webhooks.get('acct-never-read'), rotated);
  });

  it('gives every account its own secret, and rotating one leaves the others', async () => {
    const secretA = await readSecret(app, 'GET', 'acct-a');
    const secretB = await readSecret(app, 'GET', 'acct-b');
    assert.notEqual(secretA, secretB);
    await readSecret(app, 'POST', 'acct-b');
    assert.equal(await readSecret(app, 'GET', 'acct-a'), secretA);
  });

  it('agrees on one secret when first reads race', async () => {
    const secrets = await Promise.all(Array.from({ length: 8 }, () => app.runloom.webhooks.get('acct-racing')));
    assert.equal(new Set(secrets).size, 1);
    assert.equal(await app.runloom.webhooks.get('acct-racing'), secrets[0]);
  });

  it('stores the secret only sealed', async () => {
    const secret = await readSecret(app, 'GET');
    const stored = JSON.stringify(await app.runloom.container.get<Database>(Database).find('webhook_secrets'));
    assert.match(stored, /sealed_secret/);
    assert.ok(!stored.includes(secret.slice('whsec_'.length)), 'a stored document holds the plaintext secret');
  });

  it('needs a bearer token', async () => {
    for (const [method, path] of [
      ['GET', '/v1/webhook-secret'],
      ['POST', '/v1/webhook-secret/rotate'],
    ] as const) {
      const response = await app.runloom.handle(new Request(`http://runloom.test${path}`, { method }));
      assert.equal(response.status, 401);
      assert.ok(!(await response.text()).includes('whsec_'));
    }
  });

  it('documents both routes in the OpenAPI document', async () => {
    const document = (await (await app.request('/v1/openapi.json')).json()) as { paths: Record<string, Record<string, unknown>> };
    assert.ok(document.paths['/v1/webhook-secret']?.get);
    assert.ok(document.paths['/v1/webhook-secret/rotate']?.post);
  });
});
