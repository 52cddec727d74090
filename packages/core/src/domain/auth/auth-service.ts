import { inject, injectable } from 'inversify';
import { base64url, errors as joseErrors, jwtVerify, SignJWT, type JWK, type JWTHeaderParameters } from 'jose';
import { RunloomConfig } from '../../config';
import { DomainError } from '../errors';
import type { Principal } from './principal';
import { Clock } from '../../ports/clock';
import { Database, DuplicateIdError, type Doc } from '../../ports/database';
import { IdGenerator } from '../../ports/id-generator';
import { Logger } from '../../ports/logger';
import { PasswordHasher } from '../../ports/password-hasher';
import { CLIENTS } from './auth-migrations';
import { OAuthError } from './oauth-error';
import { SIGNING_ALGORITHM, SigningKeyRing } from './signing-keys';
import { TokenThrottle } from './token-throttle';
import { VerifiedTokenCache } from './verified-token-cache';

export const AuthService = Symbol.for('runloom.AuthService');

export interface ClientCredentials {
  client_id: string;
  client_secret: string;
}

/** A token request as sent; fields may be missing, the service says which. */
export interface TokenRequest {
  grant_type?: string;
  client_id?: string;
  client_secret?: string;
}

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  /** Seconds. */
  expires_in: number;
}

/**
 * Service-account clients and the OAuth2 client-credentials grant: clients belong to an account,
 * their secrets are stored only as slow salted hashes, tokens are EdDSA-signed JWTs whose public
 * keys are served as a JWKS.
 */
export interface AuthService {
  /** A new client of `accountId` with a random id and secret; the secret is never readable again. */
  createClient(accountId: string): Promise<ClientCredentials>;
  /** Creates the client, or sets its secret when it exists in the same account (bootstrap). */
  upsertClient(accountId: string, clientId: string, secret: string): Promise<'created' | 'updated' | 'unchanged'>;
  /**
   * The client-credentials grant; throws `OAuthError` for a refused request. Failed client
   * authentications are throttled per client id and address (`TokenThrottle`): `slow_down` (429)
   * with the seconds to wait. Without `connection.remoteAddress` the caller counts as one unknown
   * address.
   */
  issueToken(request: TokenRequest, connection?: { remoteAddress?: string }): Promise<TokenResponse>;
  /** Who a bearer token speaks for; throws a `DomainError` UNAUTHORIZED for any token it refuses. */
  verify(token: string): Promise<Principal>;
  /** The JWKS `keys`: every public key that may still verify a live token. */
  publicJwks(): Promise<JWK[]>;
  /** Starts signing with a new key; earlier tokens keep verifying until they expire. Returns its `kid`. */
  rotateSigningKey(): Promise<string>;
}

interface ClientRecord extends Doc {
  /** The client id. */
  id: string;
  account_id: string;
  secret_hash: string;
  created_at: string;
  updated_at: string;
}

export const TOKEN_ISSUER = 'runloom';
/** Verified tokens remembered; at ~0.5 KB each this bounds the cache to a few MB. */
const VERIFIED_TOKEN_CACHE_SIZE = 10_000;
/** Printable ASCII without spaces or ':' (the separator of `ACCOUNT:CLIENT_ID:SECRET`). */
const IDENTIFIER = /^[\x21-\x39\x3b-\x7e]{1,128}$/;
const MAX_SECRET_LENGTH = 1024;

@injectable()
export class AuthServiceImpl implements AuthService {
  private readonly verifiedTokens = new VerifiedTokenCache(VERIFIED_TOKEN_CACHE_SIZE);
  /** Checked against when the client is unknown, so a miss costs as long as a wrong secret. */
  private decoyHash: Promise<string> | undefined;

  constructor(
    @inject(Database) private readonly database: Database,
    @inject(PasswordHasher) private readonly hasher: PasswordHasher,
    @inject(SigningKeyRing) private readonly keys: SigningKeyRing,
    @inject(Clock) private readonly clock: Clock,
    @inject(IdGenerator) private readonly ids: IdGenerator,
    @inject(RunloomConfig) private readonly config: RunloomConfig,
    @inject(TokenThrottle) private readonly throttle: TokenThrottle,
    @inject(Logger) private readonly logger: Logger,
  ) {}

  async createClient(accountId: string): Promise<ClientCredentials> {
    checkIdentifier('account id', accountId);
    const credentials = { client_id: `rlc_${randomToken(16)}`, client_secret: `rls_${randomToken(32)}` };
    await this.database.write([
      { op: 'insert', collection: CLIENTS, doc: await this.clientRecord(accountId, credentials.client_id, credentials.client_secret) },
    ]);
    return credentials;
  }

  async upsertClient(accountId: string, clientId: string, secret: string): Promise<'created' | 'updated' | 'unchanged'> {
    checkIdentifier('account id', accountId);
    checkIdentifier('client id', clientId);
    if (secret.length === 0 || secret.length > MAX_SECRET_LENGTH) {
      throw DomainError.invalid(`client secret must be 1–${MAX_SECRET_LENGTH} characters`);
    }
    const existing = (await this.database.get(CLIENTS, clientId)) as ClientRecord | undefined;
    if (!existing) {
      try {
        await this.database.write([{ op: 'insert', collection: CLIENTS, doc: await this.clientRecord(accountId, clientId, secret) }]);
        return 'created';
      } catch (error) {
        // Another instance bootstrapping the same client won the race: update it instead.
        if (error instanceof DuplicateIdError) return this.upsertClient(accountId, clientId, secret);
        throw error;
      }
    }
    if (existing.account_id !== accountId) {
      throw DomainError.conflict(`client '${clientId}' already belongs to another account; choose another client id`);
    }
    if (await this.hasher.verify(secret, existing.secret_hash)) return 'unchanged';
    const updated: ClientRecord = {
      ...existing,
      secret_hash: await this.hasher.hash(secret),
      updated_at: this.clock.now().toISOString(),
    };
    await this.database.write([{ op: 'replace', collection: CLIENTS, doc: updated, expect: { account_id: accountId } }]);
    return 'updated';
  }

  async issueToken(request: TokenRequest, connection: { remoteAddress?: string } = {}): Promise<TokenResponse> {
    if (!request.grant_type) throw new OAuthError('invalid_request', 'grant_type is required; use client_credentials');
    if (request.grant_type !== 'client_credentials') {
      throw new OAuthError('unsupported_grant_type', 'only grant_type client_credentials is supported');
    }
    const { client_id: clientId, client_secret: secret } = request;
    if (!clientId || !secret) {
      throw new OAuthError('invalid_client', 'client authentication is required: client_id and client_secret, in the body or by HTTP Basic');
    }
    const { remoteAddress } = connection;
    const attempt = await this.throttle.begin({ clientId, remoteAddress });
    // Logged without the secret, and without a client id that names no client (it may be a secret pasted into the wrong field).
    const logFields = { event: 'auth.client_authentication', remoteAddress: remoteAddress ?? null };
    if ('retryAfterSeconds' in attempt) {
      this.logger.warn({ ...logFields, clientId: null, outcome: 'throttled', retryAfterSeconds: attempt.retryAfterSeconds }, 'client authentication throttled');
      throw new OAuthError(
        'slow_down',
        `too many failed client authentications from this address; retry in ${attempt.retryAfterSeconds} s`,
        attempt.retryAfterSeconds,
      );
    }
    // The hasher compares in constant time, and an unknown client costs one hash like a known one.
    const client = (await this.database.get(CLIENTS, clientId)) as ClientRecord | undefined;
    const matches = await this.hasher.verify(secret, client?.secret_hash ?? (await this.decoy()));
    if (!client || !matches) {
      const { failures, addressFailures, retryAfterSeconds } = attempt.failed();
      this.logger.warn(
        { ...logFields, clientId: client?.id ?? null, outcome: client ? 'wrong_secret' : 'unknown_client', failures, addressFailures, retryAfterSeconds },
        'client authentication failed',
      );
      throw new OAuthError('invalid_client', 'unknown client or wrong client secret');
    }
    attempt.succeeded();

    const { kid, privateKey } = await this.keys.currentSigner();
    const issuedAt = Math.floor(this.clock.now().getTime() / 1000);
    const ttl = this.config.tokenTtlSeconds;
    const accessToken = await new SignJWT({ account_id: client.account_id })
      .setProtectedHeader({ alg: SIGNING_ALGORITHM, kid, typ: 'JWT' })
      .setIssuer(TOKEN_ISSUER)
      .setSubject(client.id)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + ttl)
      .setJti(this.ids.newId())
      .sign(privateKey);
    return { access_token: accessToken, token_type: 'Bearer', expires_in: ttl };
  }

  async verify(token: string): Promise<Principal> {
    const now = this.clock.now();
    const cached = this.verifiedTokens.get(token, now.getTime());
    if (cached) return cached;
    let payload;
    try {
      ({ payload } = await jwtVerify(token, (header) => this.verificationKey(header), {
        algorithms: [SIGNING_ALGORITHM],
        issuer: TOKEN_ISSUER,
        currentDate: now,
        // The issuer is this service (or its siblings on the same clock): no leeway on expiry.
        clockTolerance: 0,
        requiredClaims: ['sub', 'iat', 'exp', 'jti', 'account_id'],
      }));
    } catch (error) {
      throw invalidToken(refusalReason(error));
    }
    if (typeof payload.account_id !== 'string' || typeof payload.sub !== 'string') {
      throw invalidToken('the token does not name an account and a client');
    }
    const principal: Principal = { accountId: payload.account_id, clientId: payload.sub };
    this.verifiedTokens.set(token, principal, payload.exp! * 1000);
    return principal;
  }

  publicJwks(): Promise<JWK[]> {
    return this.keys.publicJwks();
  }

  rotateSigningKey(): Promise<string> {
    return this.keys.rotate();
  }

  private async verificationKey(header: JWTHeaderParameters) {
    if (!header.kid) throw new UnknownSigningKeyError('the token header has no kid');
    const key = await this.keys.publicKey(header.kid);
    if (!key) throw new UnknownSigningKeyError('the token was signed by an unknown key');
    return key;
  }

  private async clientRecord(accountId: string, clientId: string, secret: string): Promise<ClientRecord> {
    const now = this.clock.now().toISOString();
    return { id: clientId, account_id: accountId, secret_hash: await this.hasher.hash(secret), created_at: now, updated_at: now };
  }

  private decoy(): Promise<string> {
    this.decoyHash ??= this.hasher.hash(randomToken(32));
    return this.decoyHash;
  }
}

class UnknownSigningKeyError extends Error {}

function checkIdentifier(what: string, value: string): void {
  if (!IDENTIFIER.test(value)) throw DomainError.invalid(`${what} must be 1–128 printable ASCII characters without spaces or ':'`);
}

function randomToken(bytes: number): string {
  return base64url.encode(crypto.getRandomValues(new Uint8Array(bytes)));
}

/** A short, fixed reason (it goes into a header): never echoes the token. */
function refusalReason(error: unknown): string {
  if (error instanceof UnknownSigningKeyError) return error.message;
  if (error instanceof joseErrors.JWTExpired) return 'the token has expired; get a new one from POST /auth/token';
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return `the token must be signed with ${SIGNING_ALGORITHM}`;
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return 'the token signature is invalid';
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    return error.claim === 'nbf' ? 'the token is not valid yet' : `the token's ${error.claim} claim is missing or invalid`;
  }
  return 'the token is not a well-formed JWT';
}

/**
 * UNAUTHORIZED with the RFC 6750 challenge naming what is wrong. `reason` is one of this module's fixed
 * texts (it is quoted into a header), never caller input.
 */
export function invalidToken(reason: string, error: 'invalid_token' | 'invalid_request' = 'invalid_token'): DomainError {
  return DomainError.unauthorized(`invalid bearer token: ${reason}`, { realm: 'runloom', error, description: reason });
}
