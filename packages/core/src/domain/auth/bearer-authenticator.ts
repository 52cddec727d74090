import { inject, injectable } from 'inversify';
import { ApiError } from '../../http/api-error';
import type { Authenticator, Principal } from '../../http/route';
import { AuthService, invalidToken } from './auth-service';

/** Scheme, then the credentials after any spaces. */
const AUTHORIZATION = /^(\S+)\s*(.*)$/;

/** `Authorization: Bearer <jwt>` → the caller's principal (RFC 6750 §2.1). */
@injectable()
export class BearerAuthenticator implements Authenticator {
  constructor(@inject(AuthService) private readonly auth: AuthService) {}

  async authenticate(authorization: string | null): Promise<Principal> {
    const match = AUTHORIZATION.exec(authorization?.trim() ?? '');
    if (!match) {
      throw new ApiError('UNAUTHORIZED', 'send Authorization: Bearer <token>; get a token from POST /auth/token', undefined, {
        'www-authenticate': 'Bearer realm="runloom"',
      });
    }
    const [, scheme = '', token = ''] = match;
    if (scheme.toLowerCase() !== 'bearer') throw invalidToken('the Authorization header must use the Bearer scheme', 'invalid_request');
    if (!token) throw invalidToken('the token is empty', 'invalid_request');
    return this.auth.verify(token);
  }
}
