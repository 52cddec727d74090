import { inject, injectable } from 'inversify';
import { DomainError } from '../errors';
import { Clock } from '../../ports/clock';
import { Database, type Migration, WriteConflictError } from '../../ports/database';
import { IdGenerator } from '../../ports/id-generator';
import { type WorkspaceFileSystem, WorkspaceFileSystems } from '../../ports/workspace-file-system';
import { Repository } from '../storage/repository';
import { toWorkspace, type Workspace, type WorkspaceRecord } from './workspace-record';

const COLLECTION = 'workspaces';

export const workspaceMigrations: Migration[] = [
  {
    id: 'workspaces/001-create',
    steps: [{ createCollection: COLLECTION, fields: { account_id: 'text', status: 'text', created_at: 'text', updated_at: 'text', revision: 'integer' } }],
  },
];

export interface CreateWorkspaceInput {
  name: string;
  description?: string | null;
  template_id?: string | null;
  metadata?: Record<string, unknown>;
}

export interface UpdateWorkspaceInput {
  name?: string;
  description?: string | null;
  metadata?: Record<string, unknown>;
}

const MAX_UPDATE_ATTEMPTS = 4;

/**
 * Workspace records and the one way every workspace feature reaches a workspace: `require` (404 for
 * a missing one or another account's), `requireWritable` (409 while it is archived) and `files`
 * (its `WorkspaceFileSystem`). Files, threads, commands and process runs all go through here, so
 * isolation and the archived rule hold on every route.
 */
@injectable()
export class WorkspaceService {
  private readonly workspaces: Repository<WorkspaceRecord>;

  constructor(
    @inject(Database) database: Database,
    @inject(WorkspaceFileSystems) private readonly fileSystems: WorkspaceFileSystems,
    @inject(IdGenerator) private readonly ids: IdGenerator,
    @inject(Clock) private readonly clock: Clock,
  ) {
    this.workspaces = new Repository(database, COLLECTION);
  }

  /** A new active workspace with an empty root folder. */
  async create(accountId: string, input: CreateWorkspaceInput): Promise<Workspace> {
    const now = this.clock.now().toISOString();
    const record: WorkspaceRecord = {
      id: this.ids.newId(),
      account_id: accountId,
      name: input.name,
      description: input.description ?? null,
      template_id: input.template_id ?? null,
      status: 'active',
      metadata: input.metadata ?? {},
      created_at: now,
      updated_at: now,
      revision: 1,
    };
    await this.fileSystems.open(record.id);
    await this.workspaces.insert(record);
    return toWorkspace(record);
  }

  /** The account's workspaces, newest first. */
  async list(accountId: string, page: { limit: number; offset: number }): Promise<Workspace[]> {
    const records = await this.workspaces.find(accountId, {
      orderBy: [{ field: 'created_at', direction: 'desc' }],
      limit: page.limit,
      offset: page.offset,
    });
    return records.map(toWorkspace);
  }

  /** The workspace, or 404 (another account's workspace is missing too). */
  async require(accountId: string, workspaceId: string): Promise<Workspace> {
    return toWorkspace(await this.workspaces.require(accountId, workspaceId, `workspace ${workspaceId}`));
  }

  /** The workspace, or 404; 409 while it is archived, since an archived workspace refuses changes. */
  async requireWritable(accountId: string, workspaceId: string): Promise<Workspace> {
    const workspace = await this.require(accountId, workspaceId);
    if (workspace.status === 'archived') {
      throw DomainError.conflict(`workspace ${workspaceId} is archived; post the lifecycle event 'unarchived' to change it again`);
    }
    return workspace;
  }

  /** The files of a workspace of the account (404 otherwise). */
  async files(accountId: string, workspaceId: string): Promise<WorkspaceFileSystem> {
    await this.require(accountId, workspaceId);
    return this.fileSystems.open(workspaceId);
  }

  /** Applies the given fields (and `status`, for lifecycle events); redone when it races another update. */
  async update(accountId: string, workspaceId: string, patch: UpdateWorkspaceInput & { status?: Workspace['status'] }): Promise<Workspace> {
    for (let attempt = 1; ; attempt += 1) {
      const current = await this.workspaces.require(accountId, workspaceId, `workspace ${workspaceId}`);
      const updated: WorkspaceRecord = {
        ...current,
        name: patch.name ?? current.name,
        description: patch.description === undefined ? current.description : patch.description,
        metadata: patch.metadata ?? current.metadata,
        status: patch.status ?? current.status,
        updated_at: this.clock.now().toISOString(),
        revision: current.revision + 1,
      };
      try {
        await this.workspaces.replace(updated, { revision: current.revision });
        return toWorkspace(updated);
      } catch (error) {
        if (!(error instanceof WriteConflictError) || attempt === MAX_UPDATE_ATTEMPTS) throw error;
      }
    }
  }
}
