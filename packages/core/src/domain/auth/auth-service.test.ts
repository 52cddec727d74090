import assert from 'node:assert/strict';
import { RecordingLogger } from '../../testing/recording-logger';
import { base64url, decodeJwt, decodeProtectedHeader, generateKeyPair, SignJWT } from 'jose';
import { MemoryDatabase } from '../../adapters/memory/memory-database';
import { AesGcmSecretBox } from '../../adapters/node/aes-gcm-secret-box';
import { ScryptPasswordHasher } from '../../adapters/node/scrypt-password-hasher';
import { SystemClock } from '../../adapters/node/system-clock';
import { UuidV7Generator } from '../../adapters/node/uuid-v7-generator';
import { defaultConfig, type RunloomConfig } from '../../config';
import { DomainError } from '../errors';
import type { Database } from '../../ports/database';
import type { Logger } from '../../ports/logger';
import { authMigrations, CLIENTS, SIGNING_KEYS } from './auth-migrations';
import { AuthServiceImpl, TOKEN_ISSUER } from './auth-service';
import { OAuthError } from './oauth-error';
import { SigningKeyRing } from './signing-keys';
import { TokenThrottle } from './token-throttle';

/** Time set by hand; auth sets no timers, so the system's stand. */
class ManualClock extends SystemClock {
  constructor(public ms = Date.UTC(2030, 0, 1, 12)) {
    super();
  }
  override now(): Date {
    return new Date(this.ms);
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

const config: RunloomConfig = { ...defaultConfig, tokenTtlSeconds: 600 };
// A cheap cost keeps these tests fast; the default cost is pinned in the adapter's own tests.
const hasher = new ScryptPasswordHasher({ logN: 10, r: 8, p: 1 });
const secretBox = new AesGcmSecretBox(new Uint8Array(32).fill(7));

async function startAuth(database: Database, clock: ManualClock, logger: Logger = new RecordingLogger()) {
  const keys = new SigningKeyRing(database, secretBox, clock, config);
  await keys.start();
  return { keys, auth: new AuthServiceImpl(database, hasher, keys, clock, new UuidV7Generator(), config, new TokenThrottle(clock), logger) };
}

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<OAuthError> {
  const error = await promise.then(
    () => assert.fail(`expected ${code}`),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof OAuthError, String(error));
  assert.equal(error.error, code);
  return error;
}

async function refused(promise: Promise<unknown>, reason: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof DomainError);
    assert.equal(error.code, 'UNAUTHORIZED');
    assert.match(error.message, reason);
    assert.equal(error.extras.challenge?.realm, 'runloom');
    assert.equal(error.extras.challenge?.error, 'invalid_token');
    return true;
  });
}

describe('AuthService', () => {
  let database: MemoryDatabase;
  let clock: ManualClock;
  let auth: AuthServiceImpl;
  let keys: SigningKeyRing;

  beforeEach(async () => {
    database = new MemoryDatabase();
    await database.migrate(authMigrations);
    clock = new ManualClock();
    ({ auth, keys } = await startAuth(database, clock));
  });

  const grant = (client_id: string, client_secret: string) => ({ grant_type: 'client_credentials', client_id, client_secret });

  describe('clients', () => {
    it('creates clients with high-entropy ids and secrets, storing only a salted hash', async () => {
      const first = await auth.createClient('acct-a');
      const second = await auth.createClient('acct-a');
      assert.match(first.client_id, /^rlc_[\w-]{22}$/);
      assert.match(first.client_secret, /^rls_[\w-]{43}$/);
      assert.notEqual(first.client_id, second.client_id);
      assert.notEqual(first.client_secret, second.client_secret);
      const stored = await database.get(CLIENTS, first.client_id);
      assert.equal(stored?.account_id, 'acct-a');
      assert.match(String(stored?.secret_hash), /^\$scrypt\$/);
      assert.ok(!JSON.stringify(stored).includes(first.client_secret));
    });

    it('refuses an account id with spaces or colons', async () => {
      await assert.rejects(auth.createClient('acct a'), /account id must be/);
      await assert.rejects(auth.createClient('a:b'), /account id must be/);
      await assert.rejects(auth.createClient(''), /account id must be/);
    });

    it('upserts: creates, keeps an unchanged secret, replaces a changed one', async () => {
      assert.equal(await auth.upsertClient('acct-a', 'ci-client', 'first-secret'), 'created');
      const hashBefore = (await database.get(CLIENTS, 'ci-client'))?.secret_hash;
      assert.equal(await auth.upsertClient('acct-a', 'ci-client', 'first-secret'), 'unchanged');
      assert.equal((await database.get(CLIENTS, 'ci-client'))?.secret_hash, hashBefore);
      assert.equal(await auth.upsertClient('acct-a', 'ci-client', 'second:secret'), 'updated');
      await rejectsWith(auth.issueToken(grant('ci-client', 'first-secret')), 'invalid_client');
      assert.equal((await auth.issueToken(grant('ci-client', 'second:secret'))).token_type, 'Bearer');
    });

    it('refuses to move a client to another account', async () => {
      await auth.upsertClient('acct-a', 'shared-id', 'secret');
      await assert.rejects(auth.upsertClient('acct-b', 'shared-id', 'secret'), /already belongs to another account/);
      assert.equal((await database.get(CLIENTS, 'shared-id'))?.account_id, 'acct-a');
    });

    it('refuses an empty secret', async () => {
      await assert.rejects(auth.upsertClient('acct-a', 'c', ''), /client secret must be/);
    });
  });

  describe('issueToken', () => {
    it('signs an EdDSA JWT with kid, sub, account_id, iat, exp, jti and iss', async () => {
      const { client_id, client_secret } = await auth.createClient('acct-a');
      const issued = await auth.issueToken(grant(client_id, client_secret));
      assert.equal(issued.token_type, 'Bearer');
      assert.equal(issued.expires_in, 600);
      const header = decodeProtectedHeader(issued.access_token);
      assert.equal(header.alg, 'EdDSA');
      assert.equal(header.kid, (await keys.currentSigner()).kid);
      const claims = decodeJwt(issued.access_token);
      assert.equal(claims.sub, client_id);
      assert.equal(claims.account_id, 'acct-a');
      assert.equal(claims.iss, TOKEN_ISSUER);
      assert.equal(claims.iat, clock.ms / 1000);
      assert.equal(claims.exp, clock.ms / 1000 + 600);
      assert.match(String(claims.jti), /^[0-9a-f-]{36}$/);
      assert.notEqual(decodeJwt((await auth.issueToken(grant(client_id, client_secret))).access_token).jti, claims.jti);
    });

    it('answers invalid_request, unsupported_grant_type and invalid_client', async () => {
      const { client_id, client_secret } = await auth.createClient('acct-a');
      await rejectsWith(auth.issueToken({ client_id, client_secret }), 'invalid_request');
      await rejectsWith(auth.issueToken({ ...grant(client_id, client_secret), grant_type: 'password' }), 'unsupported_grant_type');
      await rejectsWith(auth.issueToken({ grant_type: 'client_credentials', client_id }), 'invalid_client');
      await rejectsWith(auth.issueToken(grant(client_id, `${client_secret}x`)), 'invalid_client');
      const unknown = await rejectsWith(auth.issueToken(grant('rlc_unknown', client_secret)), 'invalid_client');
      assert.ok(!unknown.message.includes(client_secret));
    });
  });

  describe('issueToken throttling (failed client authentication)', () => {
    const attacker = { remoteAddress: '198.51.100.7' };
    const realClient = { remoteAddress: '203.0.113.20' };

    it('answers slow_down (429) with a Retry-After of at most 60 s after 5 failures of a client id from one address; the right secret works once it has passed', async () => {
      const { client_id, client_secret } = await auth.createClient('acct-a');
      for (let index = 0; index < 5; index += 1) await rejectsWith(auth.issueToken(grant(client_id, `wrong-${index}`), attacker), 'invalid_client');
      // The 6th is still checked (and fails), and from then on each failure doubles the wait.
      await rejectsWith(auth.issueToken(grant(client_id, 'wrong-6'), attacker), 'invalid_client');
      const throttled = await rejectsWith(auth.issueToken(grant(client_id, client_secret), attacker), 'slow_down');
      assert.equal(throttled.retryAfterSeconds, 1);
      clock.advance(1000);
      await rejectsWith(auth.issueToken(grant(client_id, 'wrong-7'), attacker), 'invalid_client');
      assert.equal((await rejectsWith(auth.issueToken(grant(client_id, client_secret), attacker), 'slow_down')).retryAfterSeconds, 2);
      clock.advance(2000);
      assert.equal((await auth.issueToken(grant(client_id, client_secret), attacker)).token_type, 'Bearer');
    });

    it('grows the back-off to a 60 s cap, and hammering while blocked neither counts nor stretches it', async () => {
      const { client_id, client_secret } = await auth.createClient('acct-a');
      for (let index = 0; index < 5; index += 1) await rejectsWith(auth.issueToken(grant(client_id, 'wrong'), attacker), 'invalid_client');
      const waits: number[] = [];
      for (let round = 0; round < 10; round += 1) {
        await rejectsWith(auth.issueToken(grant(client_id, 'wrong'), attacker), 'invalid_client');
        const wait = (await rejectsWith(auth.issueToken(grant(client_id, 'wrong'), attacker), 'slow_down')).retryAfterSeconds!;
        waits.push(wait);
        for (let hammer = 0; hammer < 50; hammer += 1) {
          assert.equal((await rejectsWith(auth.issueToken(grant(client_id, client_secret), attacker), 'slow_down')).retryAfterSeconds, wait);
        }
        clock.advance(wait * 1000);
      }
      assert.deepEqual(waits, [1, 2, 4, 8, 16, 32, 60, 60, 60, 60]);
      assert.equal((await auth.issueToken(grant(client_id, client_secret), attacker)).token_type, 'Bearer');
    });

    it('limits one address across client ids: 20 failures over many ids, then every id from it waits', async () => {
      const { client_id, client_secret } = await auth.createClient('acct-a');
      for (let index = 0; index < 20; index += 1) await rejectsWith(auth.issueToken(grant(`rlc_guess_${index}`, 'wrong'), attacker), 'invalid_client');
      await rejectsWith(auth.issueToken(grant('rlc_guess_20', 'wrong'), attacker), 'invalid_client');
      const throttled = await rejectsWith(auth.issueToken(grant(client_id, client_secret), attacker), 'slow_down');
      assert.ok(throttled.retryAfterSeconds! >= 1 && throttled.retryAfterSeconds! <= 60);
      // Another address is not affected.
      assert.equal((await auth.issueToken(grant(client_id, client_secret), realClient)).token_type, 'Bearer');
    });

    it('never lets an attacker hammering a client id from one address keep the real client on another address out', async () => {
      const { client_id, client_secret } = await auth.createClient('acct-a');
      for (let index = 0; index < 520; index += 1) {
        await auth.issueToken(grant(client_id, `guess-${index}`), attacker).catch(() => undefined);
        if (index % 50 === 0) assert.equal((await auth.issueToken(grant(client_id, client_secret), realClient)).token_type, 'Bearer');
      }
      await rejectsWith(auth.issueToken(grant(client_id, client_secret), attacker), 'slow_down');
      assert.equal((await auth.issueToken(grant(client_id, client_secret), realClient)).token_type, 'Bearer');
    });

    it('counts concurrent guesses before any is checked: a burst gets only its free failures checked', async () => {
      const { client_id } = await auth.createClient('acct-a');
      const outcomes = await Promise.all(
        Array.from({ length: 40 }, (_, index) => auth.issueToken(grant(client_id, `burst-${index}`), attacker).catch((error: OAuthError) => error.error)),
      );
      assert.equal(outcomes.filter((outcome) => outcome === 'invalid_client').length, 6);
      assert.equal(outcomes.filter((outcome) => outcome === 'slow_down').length, 34);
    });

    it('clears the count of a client id from an address on success, and treats IPv4-mapped IPv6 as its IPv4 address', async () => {
      const { client_id, client_secret } = await auth.createClient('acct-a');
      for (let round = 0; round < 3; round += 1) {
        for (let index = 0; index < 5; index += 1) await rejectsWith(auth.issueToken(grant(client_id, 'typo'), attacker), 'invalid_client');
        assert.equal((await auth.issueToken(grant(client_id, client_secret), attacker)).token_type, 'Bearer');
      }
      for (let index = 0; index < 6; index += 1) await rejectsWith(auth.issueToken(grant(client_id, 'typo'), { remoteAddress: '::ffff:198.51.100.7' }), 'invalid_client');
      await rejectsWith(auth.issueToken(grant(client_id, client_secret), attacker), 'slow_down');
    });

    it('logs each failure and each throttled attempt with address, reason and known client id, never the secret', async () => {
      const logger = new RecordingLogger();
      ({ auth } = await startAuth(database, clock, logger));
      const { client_id, client_secret } = await auth.createClient('acct-a');
      const secrets = ['wrong-secret-one', 'wrong-secret-two', 'wrong-secret-3', 'wrong-secret-4', 'wrong-secret-5', 'wrong-secret-6'];
      for (const secret of secrets) await rejectsWith(auth.issueToken(grant(client_id, secret), attacker), 'invalid_client');
      await rejectsWith(auth.issueToken(grant('rlc_nobody', 'nobody-secret'), attacker), 'invalid_client');
      await rejectsWith(auth.issueToken(grant(client_id, client_secret), attacker), 'slow_down');
      await rejectsWith(auth.issueToken(grant(`pasted ${client_secret}`, 'x'), realClient), 'invalid_client');

      assert.equal(logger.lines.length, 9);
      assert.ok(logger.lines.every((line) => line.level === 'warn'));
      assert.deepEqual(logger.lines[0]!.fields, {
        event: 'auth.client_authentication',
        remoteAddress: '198.51.100.7',
        clientId: client_id,
        outcome: 'wrong_secret',
        failures: 1,
        addressFailures: 1,
        retryAfterSeconds: 0,
      });
      assert.equal(logger.lines[5]!.fields.retryAfterSeconds, 1);
      // An id that names no client is not logged: it may be a secret pasted into the wrong field.
      assert.deepEqual([logger.lines[6]!.fields.outcome, logger.lines[6]!.fields.clientId], ['unknown_client', null]);
      assert.deepEqual([logger.lines[7]!.fields.outcome, logger.lines[7]!.message], ['throttled', 'client authentication throttled']);
      assert.deepEqual([logger.lines[8]!.fields.outcome, logger.lines[8]!.fields.clientId], ['unknown_client', null]);
      const logged = JSON.stringify(logger.lines);
      for (const secret of [...secrets, 'nobody-secret', client_secret]) assert.ok(!logged.includes(secret), secret);
    });
  });

  describe('verify', () => {
    let token: string;
    beforeEach(async () => {
      const { client_id, client_secret } = await auth.createClient('acct-v');
      token = (await auth.issueToken(grant(client_id, client_secret))).access_token;
    });

    it('returns the account and client of a valid token', async () => {
      const principal = await auth.verify(token);
      assert.equal(principal.accountId, 'acct-v');
      assert.equal(principal.clientId, decodeJwt(token).sub);
    });

    it('refuses a token at its exp, also after it was cached as verified', async () => {
      await auth.verify(token);
      clock.advance(600 * 1000 - 1);
      assert.equal((await auth.verify(token)).accountId, 'acct-v');
      clock.advance(1);
      await refused(auth.verify(token), /expired/);
    });

    it('refuses a token that is not valid yet', async () => {
      const { kid, privateKey } = await keys.currentSigner();
      const now = clock.ms / 1000;
      const early = await new SignJWT({ account_id: 'acct-v' })
        .setProtectedHeader({ alg: 'EdDSA', kid })
        .setIssuer(TOKEN_ISSUER)
        .setSubject('c')
        .setJti('j')
        .setIssuedAt(now)
        .setNotBefore(now + 2)
        .setExpirationTime(now + 60)
        .sign(privateKey);
      await refused(auth.verify(early), /not valid yet/);
    });

    it('refuses alg none, other algorithms, foreign keys, unknown kids, tampering and wrong issuers', async () => {
      const { kid, privateKey } = await keys.currentSigner();
      const [header, payload] = token.split('.') as [string, string, string];
      const encode = (value: object) => base64url.encode(JSON.stringify(value));
      const claims = decodeJwt(token);

      await refused(auth.verify(`${encode({ alg: 'none', kid })}.${payload}.`), /EdDSA|well-formed/);
      const hmac = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid }).sign(new TextEncoder().encode('k'.repeat(32)));
      await refused(auth.verify(hmac), /must be signed with EdDSA/);
      const es256 = await generateKeyPair('ES256');
      await refused(auth.verify(await new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid }).sign(es256.privateKey)), /must be signed with EdDSA/);
      const foreign = await generateKeyPair('EdDSA');
      await refused(auth.verify(await new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA', kid }).sign(foreign.privateKey)), /signature is invalid/);
      await refused(auth.verify(await new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA', kid: 'nope' }).sign(privateKey)), /unknown key/);
      await refused(auth.verify(await new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA' }).sign(privateKey)), /no kid/);
      await refused(auth.verify(`${header}.${encode({ ...claims, account_id: 'acct-other' })}.${token.split('.')[2]}`), /signature is invalid/);
      await refused(auth.verify(await new SignJWT({ ...claims, iss: 'someone-else' }).setProtectedHeader({ alg: 'EdDSA', kid }).sign(privateKey)), /iss/);
      const { account_id: _dropped, ...withoutAccount } = claims;
      await refused(auth.verify(await new SignJWT(withoutAccount).setProtectedHeader({ alg: 'EdDSA', kid }).sign(privateKey)), /account_id/);
      await refused(auth.verify('not-a-jwt'), /well-formed/);
    });
  });

  describe('signing keys', () => {
    it('makes the first key of a fresh store when it is first needed, once, however many ask at once', async () => {
      assert.equal(await database.count(SIGNING_KEYS), 0);
      const signers = await Promise.all([keys.currentSigner(), keys.currentSigner(), auth.publicJwks()]);
      assert.equal(signers[0], signers[1]);
      assert.deepEqual(
        signers[2].map((key) => key.kid),
        [signers[0].kid],
      );
      assert.equal(await database.count(SIGNING_KEYS), 1);
    });

    it('signs with the key another instance made first on a shared fresh store', async () => {
      const other = await startAuth(database, clock);
      const { kid } = await other.keys.currentSigner();
      assert.equal((await keys.currentSigner()).kid, kid);
      assert.equal(await database.count(SIGNING_KEYS), 1);
    });

    it('seals the private key in the store and lists only public keys', async () => {
      const jwks = await auth.publicJwks();
      const [stored] = await database.find(SIGNING_KEYS);
      const { d } = JSON.parse(await secretBox.open(String(stored?.private_jwk_sealed))) as { d?: string };
      assert.ok(d && d.length > 20);
      assert.equal((await keys.currentSigner()).privateKey.extractable, false);
      assert.ok(!JSON.stringify(stored).includes(d));
      assert.ok(!JSON.stringify(stored).includes('"d"'));
      assert.match(String(stored?.private_jwk_sealed), /^v1/);
      assert.equal(jwks.length, 1);
      assert.deepEqual(Object.keys(jwks[0]!).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x']);
      assert.equal(jwks[0]!.kid, stored?.id);
    });

    it('keeps the key across restarts: a token from before still verifies', async () => {
      const { client_id, client_secret } = await auth.createClient('acct-r');
      const before = (await auth.issueToken(grant(client_id, client_secret))).access_token;
      const restarted = await startAuth(database, clock);
      assert.equal((await restarted.auth.verify(before)).accountId, 'acct-r');
      assert.equal((await restarted.keys.currentSigner()).kid, (await keys.currentSigner()).kid);
      assert.equal(await database.count(SIGNING_KEYS), 1);
    });

    it('rotates: new tokens use the new key, old ones verify until they expire, JWKS lists both meanwhile', async () => {
      const { client_id, client_secret } = await auth.createClient('acct-k');
      const oldKid = (await keys.currentSigner()).kid;
      const before = (await auth.issueToken(grant(client_id, client_secret))).access_token;
      const newKid = await auth.rotateSigningKey();
      const after = (await auth.issueToken(grant(client_id, client_secret))).access_token;
      assert.equal(decodeProtectedHeader(after).kid, newKid);
      assert.equal((await auth.verify(before)).accountId, 'acct-k');
      assert.deepEqual((await auth.publicJwks()).map((key) => key.kid), [newKid, oldKid]);

      clock.advance(600 * 1000);
      assert.deepEqual((await auth.publicJwks()).map((key) => key.kid), [newKid]);
      await refused(auth.verify(before), /expired/);
    });

    it('verifies at once tokens signed by a key another instance rotated in', async () => {
      const other = await startAuth(database, clock);
      await other.auth.rotateSigningKey();
      const { client_id, client_secret } = await other.auth.createClient('acct-m');
      const fromOther = (await other.auth.issueToken(grant(client_id, client_secret))).access_token;
      assert.equal((await auth.verify(fromOther)).accountId, 'acct-m');
    });

    it('verifies at once tokens signed by the first key another instance made on the shared fresh store', async () => {
      const other = await startAuth(database, clock);
      const { client_id, client_secret } = await other.auth.createClient('acct-f');
      const fromOther = (await other.auth.issueToken(grant(client_id, client_secret))).access_token;
      assert.equal((await auth.verify(fromOther)).accountId, 'acct-f');
    });

    it('reads the store for unknown kids at most once a second', async () => {
      const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
      const forged = (kid: string) => new SignJWT({ account_id: 'acct-x' }).setProtectedHeader({ alg: 'EdDSA', kid }).setIssuer(TOKEN_ISSUER).setSubject('c').setIssuedAt().setExpirationTime('5m').sign(privateKey);
      let reads = 0;
      const find = database.find.bind(database);
      database.find = (...args) => ((reads += 1), find(...args));
      for (const kid of ['a', 'b', 'c']) await refused(auth.verify(await forged(kid)), /unknown key/);
      assert.equal(reads, 1);
      clock.advance(1000);
      await refused(auth.verify(await forged('d')), /unknown key/);
      assert.equal(reads, 2);
    });
  });
});
