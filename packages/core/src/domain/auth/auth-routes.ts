import { inject, injectable } from 'inversify';
import * as z from 'zod';
import type { HttpResult } from '../../http/http-result';
import { type Authenticator, route, type RouteDefinition } from '../../http/route';
import { readText } from '../../http/exchange';
import { DomainError } from '../errors';
import { AuthService, invalidToken, type TokenRequest } from './auth-service';
import type { Principal } from './principal';
import { OAuthError, type OAuthErrorCode } from './oauth-error';
import { lazySchema } from '../lazy-schema';

/** The token request as documented; the handler reads the body itself to answer OAuth errors. */
const tokenRequestSchema = lazySchema(() =>
  z
    .object({
      grant_type: z.literal('client_credentials'),
      client_id: z.string().optional().describe('the client id, unless sent by HTTP Basic'),
      client_secret: z.string().optional().describe('the client secret, unless sent by HTTP Basic'),
    })
    .meta({ id: 'TokenRequest' }),
);

const tokenResponseSchema = lazySchema(() =>
  z
    .object({
      access_token: z.string().describe('a JWT; send it as Authorization: Bearer <access_token>'),
      token_type: z.literal('Bearer'),
      expires_in: z.number().int().describe('lifetime in seconds'),
    })
    .meta({ id: 'TokenResponse' }),
);

const oauthErrorSchema = lazySchema(() =>
  z
    .object({
      error: z.enum(['invalid_request', 'invalid_client', 'unsupported_grant_type', 'slow_down']),
      error_description: z.string(),
    })
    .meta({ id: 'OAuthError' }),
);

const jwksSchema = lazySchema(() =>
  z
    .object({
      keys: z.array(z.object({ kty: z.string(), kid: z.string(), alg: z.string(), use: z.literal('sig') }).loose()),
    })
    .meta({ id: 'Jwks' }),
);

/** RFC 6749 §5.1: token responses (and their errors) must not be cached. */
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };
const TOKEN_FIELDS = ['grant_type', 'client_id', 'client_secret'] as const;

/**
 * The token endpoint and the JWKS. The token endpoint reads its own body (JSON or form-encoded)
 * so that every refusal, a malformed body included, answers in OAuth's `{error, error_description}`.
 */
export function authRoutes(auth: AuthService, jsonBodyLimitBytes: number): RouteDefinition[] {
  return [
    route({
      method: 'POST',
      path: '/auth/token',
      public: true,
      tag: 'auth',
      summary: 'Get an access token (OAuth2 client credentials)',
      body: {
        stream: {
          mediaTypes: ['application/json', 'application/x-www-form-urlencoded'],
          description:
            'grant_type=client_credentials, and client_id + client_secret in the body or by HTTP Basic (RFC 6749 §2.3.1)',
          schemas: { 'application/json': tokenRequestSchema, 'application/x-www-form-urlencoded': tokenRequestSchema },
        },
      },
      responses: {
        200: { description: 'the token', schema: tokenResponseSchema },
        400: { description: 'invalid_request or unsupported_grant_type', schema: oauthErrorSchema },
        401: { description: 'invalid_client: unknown client or wrong secret', schema: oauthErrorSchema },
        429: {
          description: 'slow_down: too many failed client authentications from this address; retry after Retry-After seconds (at most 60)',
          schema: oauthErrorSchema,
        },
      },
      handle: async ({ request, remoteAddress }) => {
        try {
          const tokenRequest = await readTokenRequest(request, jsonBodyLimitBytes);
          return { status: 200, body: await auth.issueToken(tokenRequest, { remoteAddress }), headers: NO_STORE };
        } catch (error) {
          if (error instanceof OAuthError) return oauthErrorResult(error);
          throw error;
        }
      },
    }),
    route({
      method: 'GET',
      path: '/.well-known/jwks.json',
      public: true,
      tag: 'auth',
      summary: 'Public keys that verify access tokens (JWKS)',
      responses: { 200: { description: 'the key set', schema: jwksSchema } },
      handle: async () => ({
        status: 200,
        body: { keys: await auth.publicJwks() },
        headers: { 'cache-control': 'public, max-age=300' },
      }),
    }),
  ];
}

/** The status of each OAuth error (RFC 6749 §5.2; `slow_down` is a throttled client authentication). */
const OAUTH_STATUS: Record<OAuthErrorCode, number> = {
  invalid_request: 400,
  invalid_client: 401,
  unsupported_grant_type: 400,
  slow_down: 429,
};

function oauthErrorResult(error: OAuthError): HttpResult {
  const status = OAUTH_STATUS[error.error];
  // RFC 9110 §15.5.2: a 401 carries a challenge; Basic is the scheme this endpoint accepts.
  const headers: Record<string, string> = { ...NO_STORE };
  if (status === 401) headers['www-authenticate'] = 'Basic realm="runloom", charset="UTF-8"';
  if (error.retryAfterSeconds !== undefined) headers['retry-after'] = String(error.retryAfterSeconds);
  return { status, body: { error: error.error, error_description: error.description }, headers };
}

/** The token request's fields from the body, with client credentials from HTTP Basic if sent. */
async function readTokenRequest(request: Request, limit: number): Promise<TokenRequest> {
  const fields = await readBodyFields(request, limit);
  const basic = basicCredentials(request.headers.get('authorization'));
  if (!basic) return fields;
  if (fields.client_secret !== undefined) {
    throw new OAuthError('invalid_request', 'authenticate the client one way only: HTTP Basic or client_secret in the body');
  }
  if (fields.client_id !== undefined && fields.client_id !== basic.client_id) {
    throw new OAuthError('invalid_request', 'client_id in the body differs from the one in HTTP Basic');
  }
  return { ...fields, ...basic };
}

async function readBodyFields(request: Request, limit: number): Promise<TokenRequest> {
  const text = await readText(request, limit);
  const form = request.headers.get('content-type')?.toLowerCase().startsWith('application/x-www-form-urlencoded') ?? false;
  let raw: Record<string, unknown>;
  if (form) {
    const params = new URLSearchParams(text);
    raw = {};
    for (const [name, value] of params) {
      // RFC 6749 §3.2: parameters must not be repeated.
      if (name in raw) throw new OAuthError('invalid_request', `${name} is given more than once`);
      raw[name] = value;
    }
  } else {
    raw = parseJsonObject(text);
  }
  const fields: TokenRequest = {};
  for (const name of TOKEN_FIELDS) {
    const value = raw[name];
    if (value === undefined || value === null || value === '') continue;
    if (typeof value !== 'string') throw new OAuthError('invalid_request', `${name} must be a string`);
    fields[name] = value;
  }
  return fields;
}

function parseJsonObject(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new OAuthError('invalid_request', 'the body is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new OAuthError('invalid_request', 'the body must be a JSON object');
  }
  return parsed as Record<string, unknown>;
}

/**
 * RFC 6749 §2.3.1: `Basic base64(urlencode(client_id) ":" urlencode(client_secret))`. Undefined
 * when the request does not use Basic; invalid_client when it does but cannot be read.
 */
function basicCredentials(authorization: string | null): { client_id: string; client_secret: string } | undefined {
  const match = /^basic\s+(\S*)\s*$/i.exec(authorization ?? '');
  if (!match) return undefined;
  const unreadable = new OAuthError('invalid_client', 'the HTTP Basic credentials cannot be read: send base64(urlencode(client_id):urlencode(client_secret))');
  let decoded: string;
  try {
    const bytes = Uint8Array.from(atob(match[1]!), (char) => char.charCodeAt(0));
    decoded = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw unreadable;
  }
  const colon = decoded.indexOf(':');
  if (colon < 0) throw unreadable;
  try {
    return { client_id: formDecode(decoded.slice(0, colon)), client_secret: formDecode(decoded.slice(colon + 1)) };
  } catch {
    throw unreadable;
  }
}

function formDecode(value: string): string {
  return decodeURIComponent(value.replace(/\+/g, ' '));
}

/** `Authorization: Bearer <jwt>` → the caller's principal (RFC 6750 §2.1). */
@injectable()
export class BearerAuthenticator implements Authenticator {
  constructor(@inject(AuthService) private readonly auth: AuthService) {}

  // On every request: plain string operations, no regular expression over the whole token.
  async authenticate(authorization: string | null): Promise<Principal> {
    const credentials = authorization?.trim() ?? '';
    if (!credentials) {
      throw DomainError.unauthorized('send Authorization: Bearer <token>; get a token from POST /auth/token', { realm: 'runloom' });
    }
    const space = credentials.indexOf(' ');
    const scheme = space < 0 ? credentials : credentials.slice(0, space);
    if (scheme.toLowerCase() !== 'bearer') throw invalidToken('the Authorization header must use the Bearer scheme', 'invalid_request');
    const token = space < 0 ? '' : credentials.slice(space + 1).trimStart();
    if (!token) throw invalidToken('the token is empty', 'invalid_request');
    return this.auth.verify(token);
  }
}
