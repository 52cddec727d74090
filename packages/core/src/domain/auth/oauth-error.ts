/** RFC 6749 §5.2 error codes the token endpoint answers with. */
export type OAuthErrorCode = 'invalid_request' | 'invalid_client' | 'unsupported_grant_type';

const STATUS: Record<OAuthErrorCode, number> = {
  invalid_request: 400,
  invalid_client: 401,
  unsupported_grant_type: 400,
};

/** A refused token request; the route turns it into `{error, error_description}`. */
export class OAuthError extends Error {
  readonly status: number;
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
  ) {
    super(description);
    this.name = 'OAuthError';
    this.status = STATUS[error];
  }
}
