import { inject, injectable } from 'inversify';
import { DomainError } from '../errors';
import { maskSecret } from '../providers/provider-credentials';
import { Repository } from '../storage/repository';
import { WorkspaceEvents } from '../workspace-events/workspace-events';
import { WorkspaceService } from '../workspaces/workspace-service';
import { Clock } from '../../ports/clock';
import { Database, DuplicateIdError, type Migration, WriteConflictError } from '../../ports/database';
import { type GitAuthor, GitClient, type GitCommitResult, type GitCredentials, type GitHead, type GitPullResult } from '../../ports/git-client';
import { EgressRefusedError, HttpClient, HttpRequestError } from '../../ports/http-client';
import { SecretBox } from '../../ports/secret-box';
import type { WorkspaceFileSystem } from '../../ports/workspace-file-system';
import { providerOf, REPOSITORY_HOSTS, REPOSITORY_PROVIDERS, type RepositoryHost, type RepositoryProvider } from './repository-hosts';
import { repositoryFailure } from './repository-errors';
import type { RepositoryConnection, RepositoryConnectionRecord, RepositoryState, RepositoryStatus } from './repository-record';
import { parseRemote, tokenCredentials } from './repository-remote';

const COLLECTION = 'workspace_repositories';

export const repositoryMigrations: Migration[] = [
  {
    id: 'repositories/001-create',
    steps: [{ createCollection: COLLECTION, fields: { account_id: 'text', provider: 'text', has_token: 'boolean', revision: 'integer' } }],
  },
];

/**
 * Runloom's own state in a workspace (its config, threads): left out of the status, commits and
 * the clean-tree check of pulls, so it never lands in the user's repository.
 */
const RUNLOOM_DIRECTORY = '.runloom';
const EXCLUDED = [RUNLOOM_DIRECTORY];

/** Who merge commits made by a pull are by when the connection names no author. */
const DEFAULT_MERGE_AUTHOR: GitAuthor = { name: 'Runloom', email: 'runloom@localhost' };

const MAX_WRITE_ATTEMPTS = 4;

export interface ConnectRepositoryInput {
  url: string;
  /** The branch to pull and push; absent: the remote's default branch, set by the clone. */
  branch?: string | null;
  /** Absent: the stored token is kept while the URL's origin stays the same; null removes it. */
  token?: string | null;
  username?: string | null;
  /** Absent: derived from the URL's host (generic when unknown). */
  provider?: RepositoryProvider;
  author?: GitAuthor | null;
}

export interface CommitInput {
  message: string;
  /** Absent: the connection's author (400 when it has none). */
  author?: GitAuthor;
  /** Only these paths; absent: every change. */
  paths?: string[];
}

/** A hosting integration with how this account uses it (docs/api.md#repositories). */
export interface RepositoryIntegration {
  provider: RepositoryProvider;
  name: string;
  hosts: readonly string[];
  auth: { scheme: 'basic'; username: string; token: string };
  /** `connected` while at least one workspace of the account is connected through it. */
  state: 'connected' | 'available';
  connected_workspaces: number;
  /** Of those, how many have a token stored. */
  workspaces_with_token: number;
}

export interface RepositoryChange {
  /** What happened, as the `repository.updated` event says it. */
  action: 'connected' | 'cloned' | 'pulled' | 'committed' | 'pushed' | 'disconnected';
  branch: string | null;
  commit: string | null;
}

/**
 * Workspaces connected to git remotes (docs/api.md#repositories): the connection (URL, branch, a
 * token sealed by the `SecretBox` and answered masked), and clone, pull, commit, push and status of
 * the working copy in the workspace's files through the `GitClient` port. Every change needs a
 * writable workspace and is published as a `repository.updated` workspace event once done.
 */
@injectable()
export class RepositoryService {
  private readonly connections: Repository<RepositoryConnectionRecord>;

  constructor(
    @inject(Database) database: Database,
    @inject(WorkspaceService) private readonly workspaces: WorkspaceService,
    @inject(GitClient) private readonly git: GitClient,
    @inject(SecretBox) private readonly secretBox: SecretBox,
    @inject(HttpClient) private readonly http: HttpClient,
    @inject(WorkspaceEvents) private readonly events: WorkspaceEvents,
    @inject(Clock) private readonly clock: Clock,
  ) {
    this.connections = new Repository(database, COLLECTION);
  }

  /** The four hosting integrations, each with the account's connections through it. */
  async integrations(accountId: string): Promise<RepositoryIntegration[]> {
    return Promise.all(
      REPOSITORY_PROVIDERS.map(async (provider) => {
        const host: RepositoryHost = REPOSITORY_HOSTS[provider];
        const [connected, withToken] = await Promise.all([
          this.connections.count(accountId, { provider }),
          this.connections.count(accountId, { provider, has_token: true }),
        ]);
        return {
          provider,
          name: host.name,
          hosts: host.hosts,
          auth: { scheme: 'basic' as const, username: host.username, token: host.token },
          state: connected > 0 ? ('connected' as const) : ('available' as const),
          connected_workspaces: connected,
          workspaces_with_token: withToken,
        };
      }),
    );
  }

  /**
   * Connects the workspace to a remote, or replaces its connection; `created` tells which. The URL
   * must be http(s) and allowed by the egress policy (400 otherwise); credentials written in it are
   * taken out and sealed as the token.
   */
  async connect(accountId: string, workspaceId: string, input: ConnectRepositoryInput): Promise<{ created: boolean; connection: RepositoryConnection }> {
    await this.workspaces.requireWritable(accountId, workspaceId);
    const remote = parseRemote(input.url);
    if (remote.token !== undefined && input.token !== undefined) {
      throw DomainError.invalid('url: carries credentials and token is given too; give the token once, in token', [
        { path: 'url', message: 'carries credentials while token is given' },
      ]);
    }
    await this.checkDestination(remote.url);
    const token = input.token === undefined ? remote.token : (input.token ?? undefined);
    const sealed = token === undefined ? undefined : await this.secretBox.seal(token);
    const { record, created } = await this.write(accountId, workspaceId, (existing, now) => {
      // Kept only for the same origin: moving a stored token to another host would hand it to that host.
      const keepToken = input.token === undefined && remote.token === undefined && existing !== undefined && new URL(existing.url).origin === remote.url.origin;
      const sealedToken = sealed ?? (keepToken ? existing.sealed_token : null);
      return {
        id: workspaceId,
        account_id: accountId,
        workspace_id: workspaceId,
        provider: input.provider ?? providerOf(remote.url),
        url: remote.url.href,
        branch: input.branch === undefined ? (existing?.branch ?? null) : input.branch,
        username: input.username !== undefined ? input.username : (remote.username ?? (keepToken ? existing.username : null)),
        sealed_token: sealedToken,
        has_token: sealedToken !== null,
        author: input.author === undefined ? (existing?.author ?? null) : input.author,
        created_at: existing?.created_at ?? now,
        updated_at: now,
        cloned_at: existing?.cloned_at ?? null,
        pulled_at: existing?.pulled_at ?? null,
        pushed_at: existing?.pushed_at ?? null,
        revision: (existing?.revision ?? 0) + 1,
      };
    });
    await this.publish(workspaceId, { action: 'connected', branch: record.branch, commit: null });
    return { created, connection: await this.view(record) };
  }

  /** The connection and the state of its working copy; 404 when the workspace has none. */
  async get(accountId: string, workspaceId: string): Promise<RepositoryState> {
    const files = await this.workspaces.files(accountId, workspaceId);
    const record = await this.requireConnection(accountId, workspaceId);
    const cloned = await this.run(() => this.git.isRepository(files));
    return { ...(await this.view(record)), status: cloned ? await this.workingCopyStatus(files) : null };
  }

  /** The working copy's branch, commit and changes; 409 before it is cloned. */
  async status(accountId: string, workspaceId: string): Promise<RepositoryStatus> {
    const files = await this.workspaces.files(accountId, workspaceId);
    await this.requireConnection(accountId, workspaceId);
    return this.workingCopyStatus(files);
  }

  /** Forgets the connection and its token; the files, `.git` included, stay in the workspace. */
  async disconnect(accountId: string, workspaceId: string): Promise<void> {
    await this.workspaces.requireWritable(accountId, workspaceId);
    const record = await this.requireConnection(accountId, workspaceId);
    try {
      await this.connections.delete(accountId, workspaceId, { revision: record.revision });
    } catch (error) {
      // Changed or removed meanwhile: gone either way unless it was reconnected, which then wins.
      if (!(error instanceof WriteConflictError)) throw error;
    }
    await this.publish(workspaceId, { action: 'disconnected', branch: record.branch, commit: null });
  }

  /** Clones the remote into the workspace; 409 when the workspace already is a working copy. */
  async clone(accountId: string, workspaceId: string): Promise<RepositoryState> {
    const { files, record, credentials } = await this.writable(accountId, workspaceId);
    const head = await this.run(() => this.git.clone(files, { url: record.url, ref: record.branch ?? undefined, credentials }));
    const updated = await this.touch(accountId, workspaceId, 'cloned_at', head);
    await this.publish(workspaceId, { action: 'cloned', branch: head.branch ?? null, commit: head.commit ?? null });
    return { ...(await this.view(updated)), status: await this.workingCopyStatus(files) };
  }

  /** Fetches the connection's branch and merges it; 409 with uncommitted changes or a conflicting merge. */
  async pull(accountId: string, workspaceId: string): Promise<GitPullResult> {
    const { files, record, credentials } = await this.writable(accountId, workspaceId);
    const branch = await this.branchOf(files, record);
    const result = await this.run(() =>
      this.git.pull(files, { url: record.url, branch, credentials, author: record.author ?? DEFAULT_MERGE_AUTHOR, exclude: EXCLUDED }),
    );
    await this.touch(accountId, workspaceId, 'pulled_at', result);
    await this.publish(workspaceId, { action: 'pulled', branch: result.branch ?? null, commit: result.commit ?? null });
    return result;
  }

  /** Commits the working tree's changes (or those under `paths`) on the current branch. */
  async commit(accountId: string, workspaceId: string, input: CommitInput): Promise<GitCommitResult> {
    await this.workspaces.requireWritable(accountId, workspaceId);
    const files = await this.workspaces.files(accountId, workspaceId);
    const record = await this.requireConnection(accountId, workspaceId);
    const author = input.author ?? record.author;
    if (!author) {
      throw DomainError.invalid(`author: required, since the repository connection has none; give {name, email} here or in PUT /workspace/${workspaceId}/repository`, [
        { path: 'author', message: 'required: the connection has no author' },
      ]);
    }
    const committed = await this.run(() => this.git.commit(files, { paths: input.paths, exclude: EXCLUDED, message: input.message, author }));
    await this.publish(workspaceId, { action: 'committed', branch: committed.branch ?? null, commit: committed.commit ?? null });
    return committed;
  }

  /** Pushes the current branch to the connection's; 409 when the remote has commits it lacks. */
  async push(accountId: string, workspaceId: string): Promise<GitHead> {
    const { files, record, credentials } = await this.writable(accountId, workspaceId);
    const branch = await this.branchOf(files, record);
    const head = await this.run(() => this.git.push(files, { url: record.url, branch, credentials }));
    await this.touch(accountId, workspaceId, 'pushed_at', head);
    await this.publish(workspaceId, { action: 'pushed', branch: head.branch ?? null, commit: head.commit ?? null });
    return head;
  }

  private async writable(accountId: string, workspaceId: string): Promise<{ files: WorkspaceFileSystem; record: RepositoryConnectionRecord; credentials?: GitCredentials }> {
    await this.workspaces.requireWritable(accountId, workspaceId);
    const files = await this.workspaces.files(accountId, workspaceId);
    const record = await this.requireConnection(accountId, workspaceId);
    const token = record.sealed_token === null ? undefined : await this.secretBox.open(record.sealed_token);
    return { files, record, credentials: tokenCredentials(record.provider, token, record.username) };
  }

  /** The connection's branch, else the one checked out (a clone of the default branch sets it). */
  private async branchOf(files: WorkspaceFileSystem, record: RepositoryConnectionRecord): Promise<string> {
    if (record.branch !== null) return record.branch;
    const { branch } = await this.run(() => this.git.head(files));
    if (!branch) throw DomainError.conflict('the working copy has no branch checked out (a tag or a commit is); set branch with PUT …/repository');
    return branch;
  }

  private async workingCopyStatus(files: WorkspaceFileSystem): Promise<RepositoryStatus> {
    const status = await this.run(() => this.git.status(files, { exclude: EXCLUDED }));
    return { branch: status.branch ?? null, commit: status.commit ?? null, changes: status.changes };
  }

  private async requireConnection(accountId: string, workspaceId: string): Promise<RepositoryConnectionRecord> {
    const record = await this.connections.get(accountId, workspaceId);
    if (!record) {
      throw new DomainError('NOT_FOUND', `workspace ${workspaceId} is not connected to a repository; connect it with PUT /workspace/${workspaceId}/repository`);
    }
    return record;
  }

  /**
   * Refuses (400) a URL the egress policy refuses. A name that does not resolve now is accepted:
   * every operation checks the addresses of the moment again.
   */
  private async checkDestination(url: URL): Promise<void> {
    try {
      await this.http.checkDestination(url.href);
    } catch (error) {
      if (error instanceof HttpRequestError && (error.kind === 'dns' || error.kind === 'timeout')) return;
      if (error instanceof EgressRefusedError || error instanceof HttpRequestError) {
        throw DomainError.invalid(`url: refused: ${error.message}`, [{ path: 'url', message: `refused: ${error.message}` }]);
      }
      throw error;
    }
  }

  /** Writes the connection `build` makes from the current one, redone when it races another write. */
  private async write(
    accountId: string,
    workspaceId: string,
    build: (existing: RepositoryConnectionRecord | undefined, now: string) => RepositoryConnectionRecord,
  ): Promise<{ record: RepositoryConnectionRecord; created: boolean }> {
    for (let attempt = 1; ; attempt += 1) {
      const existing = await this.connections.get(accountId, workspaceId);
      const record = build(existing, this.clock.now().toISOString());
      try {
        if (existing) await this.connections.replace(record, { revision: existing.revision });
        else await this.connections.insert(record);
        return { record, created: !existing };
      } catch (error) {
        const lostRace = error instanceof DuplicateIdError || error instanceof WriteConflictError;
        if (!lostRace || attempt === MAX_WRITE_ATTEMPTS) throw error;
      }
    }
  }

  /** Records when the operation happened, and the branch a clone checked out when none was set. */
  private async touch(accountId: string, workspaceId: string, field: 'cloned_at' | 'pulled_at' | 'pushed_at', head: GitHead): Promise<RepositoryConnectionRecord> {
    const { record } = await this.write(accountId, workspaceId, (existing, now) => {
      if (!existing) throw DomainError.conflict(`workspace ${workspaceId} was disconnected from its repository meanwhile`);
      return { ...existing, branch: existing.branch ?? head.branch ?? null, [field]: now, updated_at: now, revision: existing.revision + 1 };
    });
    return record;
  }

  /** Runs a `GitClient` call, its failures as the refusals clients see. */
  private async run<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      throw repositoryFailure(error);
    }
  }

  private async publish(workspaceId: string, change: RepositoryChange): Promise<void> {
    await this.events.publish(workspaceId, { type: 'repository.updated', ...change });
  }

  private async view(record: RepositoryConnectionRecord): Promise<RepositoryConnection> {
    return {
      workspace_id: record.workspace_id,
      provider: record.provider,
      url: record.url,
      branch: record.branch,
      username: record.username ?? REPOSITORY_HOSTS[record.provider].username,
      token: record.sealed_token === null ? null : maskSecret(await this.secretBox.open(record.sealed_token)),
      author: record.author,
      created_at: record.created_at,
      updated_at: record.updated_at,
      cloned_at: record.cloned_at,
      pulled_at: record.pulled_at,
      pushed_at: record.pushed_at,
    };
  }
}
