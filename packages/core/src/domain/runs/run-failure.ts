import { DomainError } from '../errors';
import { ModelCallError } from '../../ports/model-gateway';
import { ProviderUnavailableError } from '../providers/provider-service';
import type { RunError } from './run-record';

/** A run failed for a reason the caller can act on; `code` and `message` go into the run's `error`. */
export class RunFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'RunFailure';
  }
}

/** The abort reason of a run cancelled by request. */
export class RunCancelled extends Error {
  constructor() {
    super('the run was cancelled');
    this.name = 'RunCancelled';
  }
}

/** The abort reason of a run that reached its `timeout_seconds`. */
export class RunTimedOut extends Error {
  constructor(readonly seconds: number) {
    super(`the run did not finish within its timeout of ${seconds} s`);
    this.name = 'RunTimedOut';
  }
}

/**
 * The run error for anything a run can fail with. Messages of known failures are the caller's to
 * read (they name the provider, the step, the field); an unexpected error is described without
 * its text, which could hold anything.
 */
export function describeFailure(error: unknown): RunError {
  if (error instanceof RunFailure) return { code: error.code, message: error.message };
  if (error instanceof RunCancelled) return { code: 'cancelled', message: error.message };
  if (error instanceof RunTimedOut) return { code: 'timeout', message: error.message };
  if (error instanceof ProviderUnavailableError) return { code: 'provider_unavailable', message: error.message };
  if (error instanceof ModelCallError) {
    const unavailable = error.code === 'provider_not_configured' || error.code === 'provider_disabled';
    return { code: unavailable ? 'provider_unavailable' : error.code, message: error.message };
  }
  if (error instanceof DomainError) return { code: error.code.toLowerCase(), message: error.message };
  return { code: 'internal', message: 'the run failed on an unexpected server error; the server log has the details' };
}

/** Whether `describeFailure` had to hide the error: worth a log line with the real one. */
export function isUnexpectedFailure(error: unknown): boolean {
  return !(
    error instanceof RunFailure ||
    error instanceof RunCancelled ||
    error instanceof RunTimedOut ||
    error instanceof DomainError ||
    error instanceof ModelCallError
  );
}
