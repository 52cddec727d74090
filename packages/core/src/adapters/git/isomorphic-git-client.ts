import fs from 'node:fs';
import path from 'node:path';
import type { AuthCallback, HttpClient as GitHttpPlugin, StatusRow } from 'isomorphic-git';
import {
  type GitChange,
  type GitClient,
  type GitCloneOptions,
  type GitCommitOptions,
  type GitCommitResult,
  GitError,
  type GitHead,
  type GitPathFilter,
  type GitPullOptions,
  type GitPullResult,
  type GitPushOptions,
  type GitRemote,
  type GitStatus,
} from '../../ports/git-client';
import { EgressRefusedError, type HttpClient, HttpRequestError } from '../../ports/http-client';
import type { WorkspaceFileSystem } from '../../ports/workspace-file-system';
import { SerialByKey } from '../serial-by-key';
import { gitHttpTransport } from './git-http-transport';

type Git = (typeof import('./isomorphic-git'))['git'];

let loadedGit: Promise<Git> | undefined;

/** isomorphic-git, from its own bundle, required on the first operation (see `isomorphic-git.ts`). */
function importIsomorphicGit(): Promise<Git> {
  loadedGit ??= import('./isomorphic-git').then((module) => module.git);
  return loadedGit;
}

export interface IsomorphicGitClientOptions {
  /** Every remote request goes through it, under its egress policy. */
  http: HttpClient;
  /** Bound on each clone, pull or push, all its requests included; default 5 minutes. */
  timeoutMs?: number;
  /** Bound on each request until the remote answers (status and headers); default 30 s. */
  answerTimeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 5 * 60_000;
const DEFAULT_ANSWER_TIMEOUT_MS = 30_000;

/**
 * The `GitClient` on isomorphic-git, with Node's `fs` in the workspace's `localRoot` and the
 * `HttpClient` port as its transport (`git-http-transport.ts`). Operations on one working copy run
 * one at a time (a pull and a commit at once would race on the index and the refs); operations on
 * different working copies run side by side.
 */
export class IsomorphicGitClient implements GitClient {
  private readonly http: HttpClient;
  private readonly timeoutMs: number;
  private readonly answerTimeoutMs: number;
  /** Operations queued on each working copy, by root. */
  private readonly queues = new SerialByKey();

  constructor(options: IsomorphicGitClientOptions) {
    this.http = options.http;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.answerTimeoutMs = options.answerTimeoutMs ?? DEFAULT_ANSWER_TIMEOUT_MS;
  }

  isRepository(files: WorkspaceFileSystem): Promise<boolean> {
    return this.local(files, (dir) => hasRepository(dir));
  }

  head(files: WorkspaceFileSystem): Promise<GitHead> {
    return this.local(files, async (dir, git) => {
      await requireRepository(dir);
      return head(git, dir);
    });
  }

  clone(files: WorkspaceFileSystem, options: GitCloneOptions): Promise<GitHead> {
    return this.remote(files, options, async (dir, git, remote) => {
      if (await hasRepository(dir)) throw new GitError('already_a_repository', 'the workspace already is a git working copy; pull to update it');
      await git.clone({ fs, dir, ...remote, ref: options.ref, singleBranch: true });
      return head(git, dir);
    });
  }

  pull(files: WorkspaceFileSystem, options: GitPullOptions): Promise<GitPullResult> {
    return this.remote(files, options, async (dir, git, remote) => {
      await requireRepository(dir);
      // isomorphic-git moves the branch before it checks the merge out: refusing a dirty working
      // tree first keeps a failed checkout from leaving the branch ahead of the files.
      const local = await changes(git, dir, { exclude: options.exclude });
      if (local.length > 0) {
        throw new GitError('conflict', `the working tree has ${local.length} uncommitted change(s) (${fewPaths(local.map((change) => change.path))}); commit them before pulling`);
      }
      const before = await headCommit(git, dir);
      await git.pull({
        fs,
        dir,
        ...remote,
        ref: options.branch,
        remoteRef: options.branch,
        singleBranch: true,
        fastForward: true,
        author: options.author,
      });
      const after = await head(git, dir);
      if (after.commit === before) return { ...after, outcome: 'up_to_date' };
      const { commit } = await git.readCommit({ fs, dir, oid: after.commit! });
      return { ...after, outcome: commit.parent.length > 1 && commit.parent.includes(before ?? '') ? 'merged' : 'fast_forward' };
    });
  }

  commit(files: WorkspaceFileSystem, options: GitCommitOptions): Promise<GitCommitResult> {
    return this.local(files, async (dir, git) => {
      await requireRepository(dir);
      const rows = await git.statusMatrix({ fs, dir, ...matrixFilter(options) });
      // Stage every path whose index differs from HEAD or from the disk: the commit records the working tree as it is.
      const unstaged = rows.filter(([, headStatus, workdir, stage]) => !(headStatus === 1 && workdir === 1 && stage === 1));
      const changed = rows.filter(isChange);
      if (changed.length === 0) throw new GitError('nothing_to_commit', 'the working tree has no changes to commit');
      const present = unstaged.filter(([, , workdir]) => workdir !== 0).map(([filepath]) => filepath);
      if (present.length > 0) await git.add({ fs, dir, filepath: present });
      for (const [filepath] of unstaged.filter(([, , workdir]) => workdir === 0)) await git.remove({ fs, dir, filepath });
      await git.commit({ fs, dir, message: options.message, author: options.author });
      return { ...(await head(git, dir)), changes: changed.map(toChange) };
    });
  }

  push(files: WorkspaceFileSystem, options: GitPushOptions): Promise<GitHead> {
    return this.remote(files, options, async (dir, git, remote) => {
      await requireRepository(dir);
      await git.push({ fs, dir, ...remote, ref: options.branch, remoteRef: options.branch });
      return head(git, dir);
    });
  }

  status(files: WorkspaceFileSystem, filter: GitPathFilter = {}): Promise<GitStatus> {
    return this.local(files, async (dir, git) => {
      await requireRepository(dir);
      return { ...(await head(git, dir)), changes: await changes(git, dir, filter) };
    });
  }

  /** A local operation: `work` in the workspace's root, in its turn (see `queued`). */
  private local<T>(files: WorkspaceFileSystem, work: (dir: string, git: Git) => Promise<T>): Promise<T> {
    return this.queued(files, async (dir) => {
      const git = await importIsomorphicGit();
      try {
        return await work(dir, git);
      } catch (error) {
        throw gitError(error);
      }
    });
  }

  /**
   * An operation with a remote: `work` gets isomorphic-git's remote arguments (the URL, the
   * transport under the egress policy, the credentials when asked), all its requests bounded by
   * the timeout from when it starts.
   */
  private remote<T>(files: WorkspaceFileSystem, remote: GitRemote, work: (dir: string, git: Git, remote: RemoteArguments) => Promise<T>): Promise<T> {
    return this.queued(files, async (dir) => {
      const target = remoteTarget(remote.url);
      const git = await importIsomorphicGit();
      const signal = AbortSignal.timeout(this.timeoutMs);
      try {
        return await work(dir, git, remoteArguments(target, remote.credentials, gitHttpTransport(this.http, signal, this.answerTimeoutMs)));
      } catch (error) {
        throw gitError(error, { target, signal, timeoutMs: this.timeoutMs });
      }
    });
  }

  /** Runs `run` in the workspace's root once the operations already queued there have settled. */
  private queued<T>(files: WorkspaceFileSystem, run: (dir: string) => Promise<T>): Promise<T> {
    const dir = files.localRoot;
    if (dir === undefined) {
      return Promise.reject(new GitError('workspace_not_local', "git needs the workspace's files on this machine's disk, and this server keeps them elsewhere"));
    }
    return this.queues.run(dir, () => run(dir));
  }
}

/** What isomorphic-git's remote operations take: the URL, the transport, and the credentials when asked. */
interface RemoteArguments {
  url: string;
  http: GitHttpPlugin;
  onAuth: AuthCallback;
}

function remoteArguments(target: URL, credentials: GitRemote['credentials'], http: GitHttpPlugin): RemoteArguments {
  return {
    url: target.href,
    http,
    // Only when the remote asks (401): public repositories never see the token. Without
    // credentials the operation stops there (an `auth` failure) instead of retrying.
    onAuth: () => (credentials ? { username: credentials.username, password: credentials.password } : { cancel: true }),
  };
}

/** The remote's URL, refused unless it is `http(s)://` without credentials (they go in `credentials`). */
function remoteTarget(url: string): URL {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new GitError('invalid_url', 'the remote URL is not an absolute URL');
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    throw new GitError('invalid_url', `the remote URL must be http or https, not ${target.protocol.slice(0, -1)}`);
  }
  if (target.username !== '' || target.password !== '') throw new GitError('invalid_url', 'the remote URL must not carry credentials (user:password@)');
  return target;
}

/** The remote as messages name it: scheme, host and path, nothing else (no query, no fragment). */
function remoteName(target: URL): string {
  return `${target.protocol}//${target.host}${target.pathname}`;
}

/** The remote operation a failure happened in. */
interface RemoteContext {
  target: URL;
  signal: AbortSignal;
  timeoutMs: number;
}

/** isomorphic-git's and the transport's failures as `GitError`s whose messages hold no credential. */
function gitError(error: unknown, context?: RemoteContext): unknown {
  if (error instanceof GitError) return error;
  const target = context?.target;
  const remote = target ? remoteName(target) : 'the remote';
  if (error instanceof EgressRefusedError) return new GitError('refused', `${remote}: ${error.message}`);
  if (context?.signal.aborted) return new GitError('unreachable', `${remote} did not complete the operation within ${Math.round(context.timeoutMs / 1000)} s`);
  if (error instanceof HttpRequestError) return new GitError(error.kind === 'invalid_url' ? 'invalid_url' : 'unreachable', `${remote}: ${error.message}`);
  if (error instanceof TypeError && error.cause instanceof HttpRequestError) return new GitError('unreachable', `${remote} could not be reached: ${error.cause.message}`);
  const code = (error as { code?: unknown }).code;
  const data = (error as { data?: Record<string, unknown> }).data ?? {};
  switch (code) {
    case 'HttpError': {
      const status = Number(data.statusCode);
      if (status === 401 || status === 403) return new GitError('auth', `${remote} refused the credentials (HTTP ${status}); give a token that may ${status === 403 ? 'write to' : 'read'} this repository`);
      if (status === 404) return new GitError('not_found', `${remote} has no such repository (HTTP 404)`);
      return new GitError(status >= 500 ? 'unreachable' : 'protocol', `${remote} answered HTTP ${status}`);
    }
    case 'UserCanceledError':
      return new GitError('auth', `${remote} asks for credentials; give a token that may read this repository`);
    case 'SmartHttpError':
    case 'EmptyServerResponseError':
    case 'ParseError':
      return new GitError('protocol', `${remote} did not answer as a git HTTP server; check the repository URL`);
    case 'NotFoundError':
      return new GitError('not_found', `${target ? `${remote}: ` : ''}${String((error as Error).message).replace(/^Could not find /, 'no ')}`);
    case 'PushRejectedError':
      return new GitError('rejected', `${remote} has commits this branch lacks; pull, then push again`);
    case 'GitPushError':
      return new GitError('rejected', `${remote} refused the update: ${String(data.prettyDetails ?? '')}`.trim());
    case 'MergeConflictError':
    case 'MergeNotSupportedError':
      return new GitError('conflict', `the remote's changes conflict with the local commits${pathsOf(data.filepaths)}; resolve them in a clone and push, or reconnect`);
    case 'CheckoutConflictError':
      return new GitError('conflict', `files in the workspace would be overwritten${pathsOf(data.filepaths)}; move or delete them first`);
    case 'FastForwardError':
      return new GitError('conflict', 'the local branch and the remote branch have diverged');
    default:
      return error;
  }
}

/** ` (a, b, c, d, e, …)`: the first paths of a failure's list, for its message. */
function pathsOf(paths: unknown): string {
  return Array.isArray(paths) && paths.length > 0 ? ` (${fewPaths(paths.map(String))})` : '';
}

function fewPaths(paths: string[]): string {
  return `${paths.slice(0, 5).join(', ')}${paths.length > 5 ? ', …' : ''}`;
}

async function hasRepository(dir: string): Promise<boolean> {
  try {
    return (await fs.promises.stat(path.join(dir, '.git'))).isDirectory();
  } catch {
    return false;
  }
}

async function requireRepository(dir: string): Promise<void> {
  if (!(await hasRepository(dir))) throw new GitError('not_a_repository', 'the workspace is not a git working copy yet; clone first');
}

async function headCommit(git: Git, dir: string): Promise<string | undefined> {
  try {
    return await git.resolveRef({ fs, dir, ref: 'HEAD' });
  } catch {
    // A repository without commits.
    return undefined;
  }
}

async function head(git: Git, dir: string): Promise<GitHead> {
  const branch = await git.currentBranch({ fs, dir, test: true });
  return { branch: branch || undefined, commit: await headCommit(git, dir) };
}

/** isomorphic-git's `filepaths` and `filter` for a path filter. */
function matrixFilter(filter: GitPathFilter): { filepaths?: string[]; filter?: (filepath: string) => boolean } {
  const excluded = filter.exclude ?? [];
  return {
    ...(filter.paths ? { filepaths: [...filter.paths] } : {}),
    ...(excluded.length > 0 ? { filter: (filepath: string) => !excluded.some((directory) => filepath === directory || filepath.startsWith(`${directory}/`)) } : {}),
  };
}

/** Working tree against HEAD: added, modified, deleted. */
function isChange([, headStatus, workdir]: StatusRow): boolean {
  return (headStatus === 0 && workdir === 2) || (headStatus === 1 && workdir !== 1);
}

async function changes(git: Git, dir: string, filter: GitPathFilter): Promise<GitChange[]> {
  const rows = await git.statusMatrix({ fs, dir, ...matrixFilter(filter) });
  return rows.filter(isChange).map(toChange);
}

function toChange([filepath, headStatus, workdir]: StatusRow): GitChange {
  return { path: filepath, change: headStatus === 0 ? 'added' : workdir === 0 ? 'deleted' : 'modified' };
}
