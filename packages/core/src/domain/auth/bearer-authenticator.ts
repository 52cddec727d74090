import { inject, injectable } from 'inversify';
import { ApiError } from '../../http/api-error';
import type { Authenticator, Principal } from '../../http/route';
import { AuthService, invalidToken } from './auth-service';

/** `Authorization: Bearer <jwt>` → the caller's principal (RFC 6750 §2.1). */
@injectable()
export class BearerAuthenticator implements Authenticator {
  constructor(@inject(AuthService) private readonly auth: AuthService) {}

  // On every request: plain string operations, no regular expression over the whole token.
  async authenticate(authorization: string | null): Promise<Principal> {
    const credentials = authorization?.trim() ?? '';
    if (!credentials) {
      throw new ApiError('UNAUTHORIZED', 'send Authorization: Bearer <token>; get a token from POST /auth/token', undefined, {
        'www-authenticate': 'Bearer realm="runloom"',
      });
    }
    const space = credentials.indexOf(' ');
    const scheme = space < 0 ? credentials : credentials.slice(0, space);
    if (scheme.toLowerCase() !== 'bearer') throw invalidToken('the Authorization header must use the Bearer scheme', 'invalid_request');
    const token = space < 0 ? '' : credentials.slice(space + 1).trimStart();
    if (!token) throw invalidToken('the token is empty', 'invalid_request');
    return this.auth.verify(token);
  }
}
