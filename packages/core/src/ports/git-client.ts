import type { WorkspaceFileSystem } from './workspace-file-system';

/**
 * Git working copies in workspaces, and their remotes over HTTP(S) (docs/api.md#repositories).
 *
 * Guarantees an adapter gives:
 * - It works in the workspace's root (`WorkspaceFileSystem.localRoot`); a workspace whose files
 *   are not on this machine's disk is refused with `GitError` `workspace_not_local` before
 *   anything is read or sent.
 * - Every request to a remote goes through the `HttpClient` port, under its egress policy: a
 *   destination the policy refuses fails with `GitError` `refused`, nothing sent.
 * - Credentials travel only in the `Authorization` header of requests the remote challenged
 *   (HTTP Basic, `username:password`); they are never written to the repository (its config,
 *   its remotes) and never appear in an error message. A remote `url` must carry none itself.
 * - Failures are `GitError`s whose `kind` says what to do about them; their messages name the
 *   remote by its URL and never repeat a remote's answer body.
 */
export const GitClient = Symbol.for('runloom.GitClient');

/** HTTP Basic credentials for a remote; hosts differ in the username they expect with a token. */
export interface GitCredentials {
  username: string;
  password: string;
}

export interface GitAuthor {
  name: string;
  email: string;
}

export interface GitRemote {
  /** `http(s)://` URL of the repository, without credentials. */
  url: string;
  credentials?: GitCredentials;
}

export interface GitCloneOptions extends GitRemote {
  /** Branch or tag to check out; default the remote's default branch. */
  ref?: string;
}

export interface GitPullOptions extends GitRemote, Pick<GitPathFilter, 'exclude'> {
  /** The local branch, fetched from the remote branch of the same name. */
  branch: string;
  /** The author of a merge commit, when the histories diverged and merge cleanly. */
  author: GitAuthor;
}

export interface GitPushOptions extends GitRemote {
  /** The local branch, pushed to the remote branch of the same name. */
  branch: string;
}

export interface GitPathFilter {
  /** Only these paths (files, or directories and everything under them); default every path. */
  paths?: readonly string[];
  /** Leave out these directories (root-relative, e.g. `.runloom`) and everything under them. */
  exclude?: readonly string[];
}

export interface GitCommitOptions extends GitPathFilter {
  message: string;
  author: GitAuthor;
}

export type GitChangeKind = 'added' | 'modified' | 'deleted';

export interface GitChange {
  /** Root-relative, `/`-separated. */
  path: string;
  /** Against the last commit: a new file (untracked or staged), a changed one, a removed one. */
  change: GitChangeKind;
}

export interface GitHead {
  /** The checked-out branch; undefined when the head is detached (a tag was checked out). */
  branch: string | undefined;
  /** The commit the head points at; undefined in a repository without commits. */
  commit: string | undefined;
}

export interface GitStatus extends GitHead {
  /** Working tree changes against the head commit, sorted by path; ignored files are left out. */
  changes: GitChange[];
}

export interface GitCommitResult extends GitHead {
  /** What the commit recorded. */
  changes: GitChange[];
}

export interface GitPullResult extends GitHead {
  /** `up_to_date`: nothing new; `fast_forward`: moved to the remote's commit; `merged`: a merge commit was made. */
  outcome: 'up_to_date' | 'fast_forward' | 'merged';
}

export interface GitClient {
  /** Whether the workspace's root is a git working copy (has a repository of its own). */
  isRepository(files: WorkspaceFileSystem): Promise<boolean>;
  /** The checked-out branch and commit. */
  head(files: WorkspaceFileSystem): Promise<GitHead>;
  /**
   * Clones the remote into the workspace's root and checks out `ref`. Files already in the root
   * stay (as untracked files); one that the checkout would overwrite fails with `conflict`.
   */
  clone(files: WorkspaceFileSystem, options: GitCloneOptions): Promise<GitHead>;
  /**
   * Fetches the branch and merges it into the local one (fast-forward when possible). A working
   * tree with uncommitted changes (outside `exclude`) is refused with `conflict` before anything
   * is fetched.
   */
  pull(files: WorkspaceFileSystem, options: GitPullOptions): Promise<GitPullResult>;
  /**
   * Stages the working tree's changes (new, changed and removed files, within the filter) and
   * commits them on the current branch; `nothing_to_commit` when there are none.
   */
  commit(files: WorkspaceFileSystem, options: GitCommitOptions): Promise<GitCommitResult>;
  /** Pushes the branch; `rejected` when the remote has commits the local branch lacks. */
  push(files: WorkspaceFileSystem, options: GitPushOptions): Promise<GitHead>;
  /** The head and the working tree's changes (within the filter). */
  status(files: WorkspaceFileSystem, filter?: GitPathFilter): Promise<GitStatus>;
}

/**
 * What went wrong, by what the caller can do about it:
 * - `invalid_url`: not an absolute `http(s)://` URL without credentials;
 * - `refused`: the egress policy refuses the destination (nothing sent);
 * - `unreachable`: no answer (name not resolved, connection refused, time out);
 * - `auth`: the remote refused the credentials, or asked for some and none were given;
 * - `not_found`: the remote has no such repository, or no such branch or tag;
 * - `protocol`: the URL answered, but not as a git HTTP server;
 * - `rejected`: a push that is not a fast-forward of the remote branch (pull first);
 * - `conflict`: a merge or a checkout would overwrite changes (or files) in the working tree;
 * - `nothing_to_commit`: the working tree has no change within the filter;
 * - `not_a_repository`: the workspace's root is not a working copy (clone first);
 * - `already_a_repository`: clone into a root that already is one;
 * - `workspace_not_local`: the workspace's files are not on this machine's disk.
 */
export type GitFailureKind =
  | 'invalid_url'
  | 'refused'
  | 'unreachable'
  | 'auth'
  | 'not_found'
  | 'protocol'
  | 'rejected'
  | 'conflict'
  | 'nothing_to_commit'
  | 'not_a_repository'
  | 'already_a_repository'
  | 'workspace_not_local';

export class GitError extends Error {
  constructor(
    readonly kind: GitFailureKind,
    message: string,
  ) {
    super(message);
    this.name = 'GitError';
  }
}
