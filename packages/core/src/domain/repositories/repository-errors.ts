import { DomainError } from '../errors';
import { GitError } from '../../ports/git-client';

/**
 * A `GitClient` failure as the refusal a client sees (docs/api.md#repositories): the URL or the
 * egress policy → 400; the remote refusing or not answering → 422 `REMOTE_FAILED` (the remote is
 * the caller's input, so never a 5xx); the working copy's state → 409; workspace files that are
 * not on this server's disk → 501. Anything else is rethrown as it is (a bug: 500).
 */
export function repositoryFailure(error: unknown): unknown {
  if (!(error instanceof GitError)) return error;
  switch (error.kind) {
    case 'invalid_url':
    case 'refused':
      return DomainError.invalid(`the repository URL is refused: ${error.message}`);
    case 'unreachable':
    case 'auth':
    case 'not_found':
    case 'protocol':
      return DomainError.remoteFailed(error.message);
    case 'rejected':
    case 'conflict':
    case 'nothing_to_commit':
    case 'not_a_repository':
    case 'already_a_repository':
      return DomainError.conflict(error.message);
    case 'workspace_not_local':
      return DomainError.notImplemented(error.message);
  }
}
