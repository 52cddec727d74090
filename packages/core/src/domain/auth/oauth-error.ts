/**
 * RFC 6749 §5.2 error codes the token endpoint answers with, and `slow_down` (registered for the
 * token endpoint by RFC 8628 §3.5) for throttled client authentication.
 */
export type OAuthErrorCode = 'invalid_request' | 'invalid_client' | 'unsupported_grant_type' | 'slow_down';

const STATUS: Record<OAuthErrorCode, number> = {
  invalid_request: 400,
  invalid_client: 401,
  unsupported_grant_type: 400,
  slow_down: 429,
};

/** A refused token request; the route turns it into `{error, error_description}`. */
export class OAuthError extends Error {
  readonly status: number;
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    /** `slow_down`: seconds until the next attempt is checked (the `Retry-After` header). */
    readonly retryAfterSeconds?: number,
  ) {
    super(description);
    this.name = 'OAuthError';
    this.status = STATUS[error];
  }
}
