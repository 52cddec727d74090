import { DomainErrorCodes as domain, type DomainErrorCode, type ErrorDetail } from '../domain/errors';

export type { ErrorDetail };

/**
 * The error model of the HTTP surface: every code an answer can carry, with its status. The
 * domain's codes (`domain/errors.ts`) are all here, with their messages; the others are the HTTP
 * layer's own (a method not allowed, a media type, malformed JSON, a range). Services throw
 * `DomainError`; route handlers and the router throw `ApiError`; the router's error mapping
 * turns both into `{error, code, details?}` with the status (docs/api.md#conventions).
 */
export const ErrorCodes = {
  BAD_REQUEST: { status: 400, message: domain.BAD_REQUEST },
  VALIDATION_FAILED: { status: 400, message: domain.VALIDATION_FAILED },
  MALFORMED_JSON: { status: 400, message: 'the body is not valid JSON' },
  UNAUTHORIZED: { status: 401, message: domain.UNAUTHORIZED },
  FORBIDDEN: { status: 403, message: domain.FORBIDDEN },
  NOT_FOUND: { status: 404, message: domain.NOT_FOUND },
  METHOD_NOT_ALLOWED: { status: 405, message: 'method not allowed' },
  CONFLICT: { status: 409, message: domain.CONFLICT },
  PAYLOAD_TOO_LARGE: { status: 413, message: domain.PAYLOAD_TOO_LARGE },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'unsupported media type' },
  RANGE_NOT_SATISFIABLE: { status: 416, message: 'range not satisfiable' },
  // A 4xx: the remote is the caller's input (docs/api.md#repositories); a 5xx would say the bug is ours.
  REMOTE_FAILED: { status: 422, message: domain.REMOTE_FAILED },
  RATE_LIMITED: { status: 429, message: domain.RATE_LIMITED },
  INTERNAL: { status: 500, message: 'internal error' },
  NOT_IMPLEMENTED: { status: 501, message: domain.NOT_IMPLEMENTED },
  UNAVAILABLE: { status: 503, message: domain.UNAVAILABLE },
} as const satisfies Record<string, { status: number; message: string }> & Record<DomainErrorCode, unknown>;

export type ErrorCode = keyof typeof ErrorCodes;

export class ApiError extends Error {
  // Named here, not by the class: the bundle (built without keepNames, esbuild.mjs) calls a class that
  // refers to itself `_ApiError`, which stack frames and `util.inspect` would show.
  static {
    Object.defineProperty(this, 'name', { value: 'ApiError' });
  }

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
