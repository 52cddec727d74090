/**
 * RFC 6749 §5.2 error codes the token endpoint answers with, and `slow_down` (registered for the
 * token endpoint by RFC 8628 §3.5) for throttled client authentication.
 */
export type OAuthErrorCode = 'invalid_request' | 'invalid_client' | 'unsupported_grant_type' | 'slow_down';

/**
 * A refused token request; the token route gives it its status and turns it into
 * `{error, error_description}` (docs/api.md#authentication).
 */
export class OAuthError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    /** `slow_down`: seconds until the next attempt is checked (the `Retry-After` header). */
    readonly retryAfterSeconds?: number,
  ) {
    super(description);
    this.name = 'OAuthError';
  }
}
