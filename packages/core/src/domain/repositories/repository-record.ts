import type { GitAuthor, GitChange } from '../../ports/git-client';
import type { AccountRecord } from '../storage/repository';
import type { RepositoryProvider } from './repository-hosts';

/**
 * A workspace's connection to a git remote, stored once per workspace (its id is the workspace's).
 * The token exists at rest only sealed by the `SecretBox`.
 */
export interface RepositoryConnectionRecord extends AccountRecord {
  workspace_id: string;
  provider: RepositoryProvider;
  /** `http(s)://…`, without credentials. */
  url: string;
  /** The branch pulled and pushed; null until a clone checks out the remote's default branch. */
  branch: string | null;
  /** The HTTP Basic username sent with the token; null: the provider's. */
  username: string | null;
  sealed_token: string | null;
  /** Whether a token is sealed: queried by the integrations listing. */
  has_token: boolean;
  author: GitAuthor | null;
  created_at: string;
  updated_at: string;
  cloned_at: string | null;
  pulled_at: string | null;
  pushed_at: string | null;
  /** Counts changes, so racing updates are detected and redone. */
  revision: number;
}

/** A connection as answered (docs/api.md#repositories): the token masked, never echoed. */
export interface RepositoryConnection {
  workspace_id: string;
  provider: RepositoryProvider;
  url: string;
  branch: string | null;
  /** The username sent with the token: the connection's, else the provider's. */
  username: string;
  /** `****abcd` (its last 4 characters), or null without a token. */
  token: string | null;
  author: GitAuthor | null;
  created_at: string;
  updated_at: string;
  cloned_at: string | null;
  pulled_at: string | null;
  pushed_at: string | null;
}

/** The working copy in the workspace: what is checked out and what changed since. */
export interface RepositoryStatus {
  branch: string | null;
  commit: string | null;
  changes: GitChange[];
}

/** A connection with the state of its working copy; null before it is cloned. */
export interface RepositoryState extends RepositoryConnection {
  status: RepositoryStatus | null;
}
