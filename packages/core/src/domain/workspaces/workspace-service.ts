import { inject, injectable } from 'inversify';
import { DomainError } from '../errors';
import { Clock } from '../../ports/clock';
import { Database, DuplicateIdError, WriteConflictError } from '../../ports/database';
import { IdGenerator } from '../../ports/id-generator';
import { type WorkspaceFileSystem, WorkspaceFileSystems } from '../../ports/workspace-file-system';
import { KeptRecords } from '../storage/kept-records';
import { Repository } from '../storage/repository';
import { WorkspaceEvents } from '../workspace-events/workspace-events';
import { lifecycleChange, type LifecycleEventName } from './workspace-lifecycle';
import { LIFECYCLE_EVENTS_COLLECTION, WORKSPACES_COLLECTION } from './workspace-migrations';
import {
  type LifecycleEvent,
  type LifecycleEventRecord,
  toLifecycleEvent,
  toWorkspace,
  type Workspace,
  type WorkspaceRecord,
} from './workspace-record';
import { WorkspaceTemplateService } from './workspace-template-service';

export interface CreateWorkspaceInput {
  /** For hosts that name their workspaces (the editor keeps one per open folder); else a new UUID v7. */
  id?: string;
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

export interface Page {
  limit: number;
  offset: number;
}

const MAX_UPDATE_ATTEMPTS = 4;
/** Workspace records kept between writes to the collection (`KeptRecords`). */
const RECORDS_KEPT = 4096;

/**
 * Workspace records and the one way every workspace feature reaches a workspace: `require` (404 for
 * a missing one or another account's), `requireWritable` (409 while it is archived or deleted) and
 * `files` (its `WorkspaceFileSystem`). Files, threads, commands and process runs all go through
 * here, so isolation and the archived rule hold on every route. Also the workspace's lifecycle log
 * (docs/api.md#workspace-lifecycle), whose events change the record.
 */
@injectable()
export class WorkspaceService {
  private readonly workspaces: Repository<WorkspaceRecord>;
  /** The records `require` reads: every request on a workspace reads its record (an upload, a thread's reply). */
  private readonly keptWorkspaces: KeptRecords<WorkspaceRecord>;
  private readonly lifecycleEvents: Repository<LifecycleEventRecord>;

  constructor(
    @inject(Database) private readonly database: Database,
    @inject(WorkspaceFileSystems) private readonly fileSystems: WorkspaceFileSystems,
    @inject(WorkspaceTemplateService) private readonly templates: WorkspaceTemplateService,
    @inject(WorkspaceEvents) private readonly events: WorkspaceEvents,
    @inject(IdGenerator) private readonly ids: IdGenerator,
    @inject(Clock) private readonly clock: Clock,
  ) {
    this.workspaces = new Repository(database, WORKSPACES_COLLECTION);
    this.keptWorkspaces = new KeptRecords(this.workspaces, RECORDS_KEPT);
    this.lifecycleEvents = new Repository(database, LIFECYCLE_EVENTS_COLLECTION);
  }

  /**
   * A new active workspace, with its template's files copied in (404 for a template the account
   * does not have) and its `created` lifecycle event. The files are written before the record: a
   * workspace whose copy failed is never listed, and its files are removed (unless the host gave
   * the id). 409 for a host-given id that exists.
   */
  async create(accountId: string, input: CreateWorkspaceInput, createdBy: string): Promise<Workspace> {
    const template = input.template_id ? await this.templates.get(accountId, input.template_id) : undefined;
    const now = this.clock.now().toISOString();
    const record: WorkspaceRecord = {
      id: input.id ?? this.ids.newId(),
      account_id: accountId,
      name: input.name,
      description: input.description ?? null,
      template_id: template?.id ?? null,
      status: 'active',
      metadata: input.metadata ?? {},
      deleted_at: null,
      created_at: now,
      updated_at: now,
      revision: 1,
    };
    const created = this.lifecycleRecord(record, 'created', null, createdBy, now);
    // A host-given id may be taken: refuse before touching that workspace's files.
    if (input.id !== undefined && (await this.database.get(WORKSPACES_COLLECTION, input.id))) throw DomainError.conflict(`workspace ${input.id} exists`);
    const files = await this.fileSystems.open(record.id);
    try {
      if (template) await this.templates.copyInto(template, files);
      await this.database.write([this.workspaces.insertOp(record), this.lifecycleEvents.insertOp(created)]);
    } catch (error) {
      // A generated id's root is new: remove what the copy wrote. A host-given id may name a folder
      // the host owns (the editor's open folder) or a workspace a racing create has just made: keep it.
      if (input.id === undefined) await this.fileSystems.remove(record.id);
      if (error instanceof DuplicateIdError) throw DomainError.conflict(`workspace ${record.id} exists`);
      throw error;
    }
    await this.publishLifecycle(record, created);
    return toWorkspace(record);
  }

  /** The account's workspaces that are not deleted, newest first. */
  async list(accountId: string, page: Page): Promise<Workspace[]> {
    const records = await this.workspaces.find(accountId, {
      where: { deleted_at: null },
      orderBy: [{ field: 'created_at', direction: 'desc' }],
      limit: page.limit,
      offset: page.offset,
    });
    return records.map(toWorkspace);
  }

  /** The workspace, or 404 (another account's workspace is missing too). */
  async require(accountId: string, workspaceId: string): Promise<Workspace> {
    return toWorkspace(await this.requireRecord(accountId, workspaceId));
  }

  /** The workspace, or 404; 409 while it is archived or deleted, since then it refuses changes. */
  async requireWritable(accountId: string, workspaceId: string): Promise<Workspace> {
    const workspace = await this.require(accountId, workspaceId);
    refuseUnlessWritable(workspace);
    return workspace;
  }

  /** The files of a workspace of the account (404 otherwise). */
  async files(accountId: string, workspaceId: string): Promise<WorkspaceFileSystem> {
    await this.require(accountId, workspaceId);
    return this.fileSystems.open(workspaceId);
  }

  /** Applies the given fields; 409 while the workspace is archived or deleted. Redone when it races another change. */
  async update(accountId: string, workspaceId: string, patch: UpdateWorkspaceInput): Promise<Workspace> {
    const { record } = await this.change(accountId, workspaceId, (current, now) => {
      refuseUnlessWritable(current);
      return {
        record: {
          ...current,
          name: patch.name ?? current.name,
          description: patch.description === undefined ? current.description : patch.description,
          metadata: patch.metadata ?? current.metadata,
          updated_at: now,
          revision: current.revision + 1,
        },
      };
    });
    return toWorkspace(record);
  }

  /**
   * Records a lifecycle event and applies what it changes (`lifecycleChange`), in one write; then
   * publishes `workspace.lifecycle` on the workspace's event stream. Accepted in every state.
   */
  async recordLifecycleEvent(accountId: string, workspaceId: string, event: LifecycleEventName, notes: string | null, createdBy: string): Promise<LifecycleEvent> {
    const { record, lifecycle } = await this.change(accountId, workspaceId, (current, now) => {
      const changed = lifecycleChange(event, current, now);
      const modifies = Object.entries(changed).some(([field, value]) => current[field as keyof WorkspaceRecord] !== value);
      const record = modifies ? { ...current, ...changed, updated_at: now, revision: current.revision + 1 } : current;
      return { record, lifecycle: this.lifecycleRecord(record, event, notes, createdBy, now) };
    });
    await this.publishLifecycle(record, lifecycle);
    return toLifecycleEvent(lifecycle);
  }

  /** The workspace's lifecycle events, oldest first; 404 for a workspace that is not the account's. */
  async listLifecycleEvents(accountId: string, workspaceId: string, page: Page): Promise<LifecycleEvent[]> {
    await this.requireRecord(accountId, workspaceId);
    const records = await this.lifecycleEvents.find(accountId, {
      where: { workspace_id: workspaceId },
      orderBy: [
        { field: 'created_at', direction: 'asc' },
        { field: 'id', direction: 'asc' },
      ],
      limit: page.limit,
      offset: page.offset,
    });
    return records.map(toLifecycleEvent);
  }

  /** The newest lifecycle event of the workspace, for its last activity. */
  async lastLifecycleEvent(accountId: string, workspaceId: string): Promise<LifecycleEvent | undefined> {
    const [last] = await this.lifecycleEvents.find(accountId, {
      where: { workspace_id: workspaceId },
      orderBy: [
        { field: 'created_at', direction: 'desc' },
        { field: 'id', direction: 'desc' },
      ],
      limit: 1,
    });
    return last && toLifecycleEvent(last);
  }

  private requireRecord(accountId: string, workspaceId: string): Promise<WorkspaceRecord> {
    return this.keptWorkspaces.require(accountId, workspaceId, `workspace ${workspaceId}`);
  }

  /**
   * Read, decide, write under the record's revision: `decide` answers the record to store (the
   * current one when nothing changes) and a lifecycle event to add with it. Redone from a fresh
   * read when another change won the race.
   */
  private async change<T extends { record: WorkspaceRecord; lifecycle?: LifecycleEventRecord }>(
    accountId: string,
    workspaceId: string,
    decide: (current: WorkspaceRecord, now: string) => T,
  ): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      const current = await this.requireRecord(accountId, workspaceId);
      const decided = decide(current, this.clock.now().toISOString());
      // Written even when unchanged: the revision check orders the event after any racing change.
      const ops = [this.workspaces.replaceOp(decided.record, { revision: current.revision })];
      if (decided.lifecycle) ops.push(this.lifecycleEvents.insertOp(decided.lifecycle));
      try {
        await this.database.write(ops);
        return decided;
      } catch (error) {
        if (!(error instanceof WriteConflictError)) throw error;
        if (attempt === MAX_UPDATE_ATTEMPTS) throw DomainError.conflict(`workspace ${workspaceId} kept changing while it was being updated: retry`);
      }
    }
  }

  private lifecycleRecord(workspace: WorkspaceRecord, event: LifecycleEventName, notes: string | null, createdBy: string, now: string): LifecycleEventRecord {
    return { id: this.ids.newId(), account_id: workspace.account_id, workspace_id: workspace.id, event, notes, created_by: createdBy, created_at: now };
  }

  private async publishLifecycle(workspace: WorkspaceRecord, lifecycle: LifecycleEventRecord): Promise<void> {
    await this.events.publish(workspace.id, {
      type: 'workspace.lifecycle',
      event: lifecycle.event,
      lifecycle_event_id: lifecycle.id,
      status: workspace.status,
      deleted: workspace.deleted_at !== null,
    });
  }
}

function refuseUnlessWritable(workspace: Pick<Workspace, 'id' | 'status' | 'deleted_at'>): void {
  if (workspace.deleted_at) {
    throw DomainError.conflict(`workspace ${workspace.id} is deleted; post the lifecycle event 'restored' to change it again`);
  }
  if (workspace.status === 'archived') {
    throw DomainError.conflict(`workspace ${workspace.id} is archived; post the lifecycle event 'unarchived' to change it again`);
  }
}
