import type * as z from 'zod';

/**
 * The refusals the domain gives, defined once: each code and its default message. Services,
 * schemas and records throw `DomainError`s and know nothing of HTTP; `http/` gives each code its
 * status and writes the `{error, code, details?}` envelope in one place (the router's error
 * mapping, docs/api.md#conventions). The codes are also what a failed run's `error.code` says,
 * lower-cased (`validation_failed`, `not_found`, …).
 */
export const DomainErrorCodes = defineErrorCodes({
  /** The input is invalid as a whole. */
  BAD_REQUEST: 'the request is invalid',
  /** The input has invalid fields, each named in `details`. */
  VALIDATION_FAILED: 'the request has invalid fields',
  /** No credential, or one that is refused. */
  UNAUTHORIZED: 'a valid bearer token is required',
  FORBIDDEN: 'not allowed',
  /** Missing, or another account's: the two read the same. */
  NOT_FOUND: 'not found',
  /** The record's current state does not allow the change (or it kept changing: retry). */
  CONFLICT: 'the current state does not allow this',
  PAYLOAD_TOO_LARGE: 'the body is too large',
  RATE_LIMITED: 'too many requests',
  UNAVAILABLE: 'the service is not ready',
  /** This server lacks a program the operation needs (e.g. LibreOffice); the message says what to install. */
  NOT_IMPLEMENTED: 'not available on this server',
  /** A remote the caller named (a git repository) refused the request or did not answer. */
  REMOTE_FAILED: 'the remote refused the request or did not answer',
});

export type DomainErrorCode = keyof typeof DomainErrorCodes;

/** One problem of a refused input: where it is and what to fix. */
export interface ErrorDetail {
  path: string;
  message: string;
  /** 1-based position in a configuration text, when the problem can be located there. */
  line?: number;
  column?: number;
}

/** How a refused credential is challenged: the realm, and what is wrong with the token (RFC 6750 §3). */
export interface CredentialChallenge {
  realm: string;
  error?: 'invalid_token' | 'invalid_request';
  /** One of the refusing module's fixed texts, never caller input. */
  description?: string;
}

/** What some codes carry beside the message. */
export interface DomainErrorExtras {
  /** UNAUTHORIZED: how to present a credential that would be accepted. */
  challenge?: CredentialChallenge;
  /** RATE_LIMITED: seconds until a retry may succeed. */
  retryAfterSeconds?: number;
}

/** A refusal of the domain; see `DomainErrorCodes`. */
export class DomainError extends Error {
  // Named here, not by the class: the bundle (built without keepNames, esbuild.mjs) calls a class that
  // refers to itself `_DomainError`, which stack frames and `util.inspect` would show.
  static {
    Object.defineProperty(this, 'name', { value: 'DomainError' });
  }

  constructor(
    readonly code: DomainErrorCode,
    message?: string,
    readonly details?: ErrorDetail[],
    readonly extras: DomainErrorExtras = {},
  ) {
    super(message ?? DomainErrorCodes[code]);
    this.name = 'DomainError';
  }

  /** Invalid input: VALIDATION_FAILED with `details` naming the fields, BAD_REQUEST without. */
  static invalid(message: string, details?: ErrorDetail[]): DomainError {
    return new DomainError(details ? 'VALIDATION_FAILED' : 'BAD_REQUEST', message, details);
  }
  static notFound(what: string): DomainError {
    return new DomainError('NOT_FOUND', `${what} not found`);
  }
  static conflict(message: string): DomainError {
    return new DomainError('CONFLICT', message);
  }
  static forbidden(message: string): DomainError {
    return new DomainError('FORBIDDEN', message);
  }
  static unauthorized(message: string, challenge: CredentialChallenge): DomainError {
    return new DomainError('UNAUTHORIZED', message, undefined, { challenge });
  }
  static tooLarge(message: string): DomainError {
    return new DomainError('PAYLOAD_TOO_LARGE', message);
  }
  static rateLimited(message: string, retryAfterSeconds: number): DomainError {
    return new DomainError('RATE_LIMITED', message, undefined, { retryAfterSeconds });
  }
  static unavailable(message: string): DomainError {
    return new DomainError('UNAVAILABLE', message);
  }
  static notImplemented(message: string): DomainError {
    return new DomainError('NOT_IMPLEMENTED', message);
  }
  static remoteFailed(message: string): DomainError {
    return new DomainError('REMOTE_FAILED', message);
  }
}

/** A zod failure of `where` as a VALIDATION_FAILED error: one detail per issue, the first summarised. */
export function validationError(error: z.ZodError, where: 'query' | 'body' | 'config' = 'body'): DomainError {
  const details: ErrorDetail[] = error.issues.map((issue) => ({
    path: issue.path.map(String).join('.'),
    message: issue.message,
  }));
  const first = details[0];
  const summary = first ? `${first.path ? `${first.path}: ` : ''}${first.message}` : 'invalid';
  return DomainError.invalid(`invalid ${where}: ${summary}`, details);
}

/** The table of codes and default messages, typed by its keys (as better-auth's `defineErrorCodes`). */
function defineErrorCodes<const T extends Record<string, string>>(codes: T): T {
  return codes;
}
