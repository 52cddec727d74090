/**
 * The error model of the HTTP surface. Codes are defined once here; services throw `ApiError`
 * and the router turns it into `{error, code, details?}` with the matching status.
 */
export const ErrorCodes = {
  BAD_REQUEST: { status: 400, message: 'the request is invalid' },
  VALIDATION_FAILED: { status: 400, message: 'the request has invalid fields' },
  MALFORMED_JSON: { status: 400, message: 'the body is not valid JSON' },
  UNAUTHORIZED: { status: 401, message: 'a valid bearer token is required' },
  FORBIDDEN: { status: 403, message: 'not allowed' },
  NOT_FOUND: { status: 404, message: 'not found' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'method not allowed' },
  CONFLICT: { status: 409, message: 'the current state does not allow this' },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'the body is too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'unsupported media type' },
  RANGE_NOT_SATISFIABLE: { status: 416, message: 'range not satisfiable' },
  RATE_LIMITED: { status: 429, message: 'too many requests' },
  INTERNAL: { status: 500, message: 'internal error' },
  NOT_IMPLEMENTED: { status: 501, message: 'not available on this server' },
  UNAVAILABLE: { status: 503, message: 'the service is not ready' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ErrorCodes;

export interface ErrorDetail {
  path: string;
  message: string;
  /** 1-based position in a configuration text, when the problem can be located there. */
  line?: number;
  column?: number;
}

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly details?: ErrorDetail[],
    readonly headers?: Record<string, string>,
  ) {
    super(message ?? ErrorCodes[code].message);
    this.name = 'ApiError';
    this.status = ErrorCodes[code].status;
  }

  static badRequest(message: string, details?: ErrorDetail[]): ApiError {
    return new ApiError(details ? 'VALIDATION_FAILED' : 'BAD_REQUEST', message, details);
  }
  static notFound(what: string): ApiError {
    return new ApiError('NOT_FOUND', `${what} not found`);
  }
  static conflict(message: string): ApiError {
    return new ApiError('CONFLICT', message);
  }
}
