import { inject, injectable } from 'inversify';
import type { ZodError } from 'zod';
import { DomainError, validationError } from '../errors';
import { Clock } from '../../ports/clock';
import { Database, DuplicateIdError, type Migration, WriteConflictError, type WriteOp } from '../../ports/database';
import { Logger } from '../../ports/logger';
import { type WorkspaceFileSystem, WorkspaceConflictError, WorkspaceNotFoundError } from '../../ports/workspace-file-system';
import { RunnableService } from '../runnables/runnable-service';
import { type AccountRecord, Repository } from '../storage/repository';
import { WorkspaceEvents } from '../workspace-events/workspace-events';
import { WorkspaceLocks } from '../workspaces/workspace-locks';
import { WorkspaceService } from '../workspaces/workspace-service';
import { COMMANDS_DIR, type CommandFile, commandPath, MAX_COMMAND_FILE_BYTES, parseCommandFile, serializeCommand, triggerOfFile } from './command-files';
import {
  type Command,
  type CommandType,
  commandDefinitionSchema,
  type CreateCommandInput,
  type PatchCommandInput,
  patchCommandSchema,
} from './command-schemas';
import { type ScoredCommand, searchCommands, suggestCommands } from './command-search';
import { lazyLruCache } from '../lazy';

export const COMMAND_INDEX = 'command_index';

export const commandMigrations: Migration[] = [
  {
    id: 'commands/001-create',
    steps: [
      {
        createCollection: COMMAND_INDEX,
        fields: { account_id: 'text', workspace_id: 'text', trigger: 'text', type: 'text', category: 'text', usage_count: 'integer', last_used_at: 'text' },
      },
    ],
  },
];

/** One command of the index: its file as last read, when that file was read, and its usage. */
export interface CommandIndexRecord extends AccountRecord {
  workspace_id: string;
  trigger: string;
  type: CommandType;
  category: string;
  usage_count: number;
  last_used_at: string | null;
  /** `size:mtime` of the file this record was read from: a file that changed is read again. */
  file_stamp: string;
  command: CommandFile;
}

export interface ListCommandsOptions {
  type?: CommandType;
  search?: string;
  limit: number;
  offset: number;
}

/**
 * Commands of a workspace (docs/api.md#commands): their files under `.runloom/commands/` are the
 * truth, the `command_index` collection indexes them (listing, categories) and holds what files
 * do not: usage counts. Every read first brings the index in line with the files — a listing of
 * the folder, compared with the last one seen, so an unchanged folder costs one directory read and
 * a file edited by hand, by the files API or by a git pull is picked up on the next request.
 */
@injectable()
export class CommandService {
  private readonly index: Repository<CommandIndexRecord>;
  /**
   * The folder listing each workspace's index was last brought in line with; a workspace dropped
   * from here only costs one comparison with its index records on its next request.
   */
  private readonly seenListings = lazyLruCache<string, string>({ max: 10_000 });

  constructor(
    @inject(Database) private readonly database: Database,
    @inject(WorkspaceService) private readonly workspaces: WorkspaceService,
    @inject(RunnableService) private readonly runnables: RunnableService,
    @inject(WorkspaceEvents) private readonly events: WorkspaceEvents,
    @inject(Clock) private readonly clock: Clock,
    @inject(Logger) private readonly logger: Logger,
    /** Index updates and file writes of one workspace's commands, one at a time across instances. */
    @inject(WorkspaceLocks) private readonly locks: WorkspaceLocks,
  ) {
    this.index = new Repository(database, COMMAND_INDEX);
  }

  /** The commands by trigger, filtered by `type` and by `search` (a substring of trigger, name or description, any case). */
  async list(accountId: string, workspaceId: string, options: ListCommandsOptions): Promise<Command[]> {
    await this.synced(accountId, workspaceId);
    const where = { workspace_id: workspaceId, ...(options.type === undefined ? {} : { type: options.type }) };
    if (options.search === undefined || options.search === '') {
      const records = await this.index.find(accountId, { where, orderBy: [{ field: 'trigger' }], limit: options.limit, offset: options.offset });
      return records.map(toCommand);
    }
    const needle = options.search.toLowerCase();
    const records = await this.index.find(accountId, { where, orderBy: [{ field: 'trigger' }] });
    return records
      .map(toCommand)
      .filter((command) => [command.trigger, command.name, command.description].some((text) => text.toLowerCase().includes(needle)))
      .slice(options.offset, options.offset + options.limit);
  }

  async get(accountId: string, workspaceId: string, trigger: string): Promise<Command> {
    return toCommand(await this.requireRecord(accountId, workspaceId, trigger));
  }

  /** The command's index record (with its usage), or 404. */
  async requireRecord(accountId: string, workspaceId: string, trigger: string): Promise<CommandIndexRecord> {
    await this.synced(accountId, workspaceId);
    return this.index.require(accountId, indexId(workspaceId, trigger), `command '${trigger.slice(0, 64)}' in workspace ${workspaceId}`);
  }

  /** Writes the command's file (409 when the trigger is taken) and indexes it. */
  async create(accountId: string, workspaceId: string, input: CreateCommandInput): Promise<Command> {
    const definition = checked(commandDefinitionSchema.safeParse(input ?? {}));
    await this.checkRunnable(accountId, input.runnable_id);
    const files = await this.writableFiles(accountId, workspaceId);
    const now = this.clock.now().toISOString();
    const command: CommandFile = { ...definition, created_at: now, updated_at: now };
    const record = await this.locked(workspaceId, async () => {
      await this.syncLocked(accountId, workspaceId, files);
      try {
        return await this.store(files, accountId, workspaceId, command, undefined, true);
      } catch (error) {
        if (error instanceof WorkspaceConflictError || error instanceof DuplicateIdError) {
          throw DomainError.conflict(`command '${command.trigger}' already exists in workspace ${workspaceId}; PATCH /workspace/${workspaceId}/command/${command.trigger} changes it`);
        }
        throw error;
      }
    });
    await this.publish(workspaceId, { type: 'command.updated', trigger: command.trigger });
    return toCommand(record);
  }

  /** Changes the given fields (null removes an optional one); the result is checked as a whole. */
  async patch(accountId: string, workspaceId: string, trigger: string, input: PatchCommandInput): Promise<Command> {
    const patch = checked(patchCommandSchema.safeParse(input ?? {}));
    await this.checkRunnable(accountId, patch.runnable_id);
    const files = await this.writableFiles(accountId, workspaceId);
    const record = await this.locked(workspaceId, async () => {
      await this.syncLocked(accountId, workspaceId, files);
      const current = await this.index.require(accountId, indexId(workspaceId, trigger), `command '${trigger.slice(0, 64)}' in workspace ${workspaceId}`);
      const merged: Record<string, unknown> = { ...current.command };
      for (const [field, value] of Object.entries(patch)) {
        if (value === null) delete merged[field];
        else if (value !== undefined) merged[field] = value;
      }
      const definition = checked(commandDefinitionSchema.safeParse({ ...merged, trigger }));
      const command: CommandFile = { ...definition, created_at: current.command.created_at, updated_at: this.clock.now().toISOString() };
      return this.store(files, accountId, workspaceId, command, current, false);
    });
    await this.publish(workspaceId, { type: 'command.updated', trigger });
    return toCommand(record);
  }

  async delete(accountId: string, workspaceId: string, trigger: string): Promise<void> {
    const files = await this.writableFiles(accountId, workspaceId);
    await this.locked(workspaceId, async () => {
      await this.syncLocked(accountId, workspaceId, files);
      const id = indexId(workspaceId, trigger);
      await this.index.require(accountId, id, `command '${trigger.slice(0, 64)}' in workspace ${workspaceId}`);
      try {
        await files.delete(commandPath(trigger));
      } catch (error) {
        if (!(error instanceof WorkspaceNotFoundError)) throw error;
      }
      await this.index.delete(accountId, id);
    });
    await this.publish(workspaceId, { type: 'command.deleted', trigger });
  }

  /** Autocomplete by trigger and name (see `suggestCommands`). */
  async suggestions(accountId: string, workspaceId: string, query: string, limit: number): Promise<Command[]> {
    return suggestCommands(await this.all(accountId, workspaceId), query, limit).map((hit) => hit.command);
  }

  /** Full-text search: a page of the ranked results and how many there are. */
  async search(accountId: string, workspaceId: string, query: string, page: { limit: number; offset: number }): Promise<{ results: ScoredResult[]; total: number }> {
    const hits = searchCommands(await this.all(accountId, workspaceId), query);
    return { results: hits.slice(page.offset, page.offset + page.limit).map(toScored), total: hits.length };
  }

  /** How many commands each category holds. */
  async categories(accountId: string, workspaceId: string): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const command of await this.all(accountId, workspaceId)) counts[command.category] = (counts[command.category] ?? 0) + 1;
    return counts;
  }

  async inCategory(accountId: string, workspaceId: string, category: string): Promise<Command[]> {
    await this.synced(accountId, workspaceId);
    return (await this.index.find(accountId, { where: { workspace_id: workspaceId, category }, orderBy: [{ field: 'trigger' }] })).map(toCommand);
  }

  /** Commands executed at least once, last executed first. */
  async recent(accountId: string, workspaceId: string, limit: number): Promise<Command[]> {
    await this.synced(accountId, workspaceId);
    const records = await this.index.find(accountId, {
      where: { workspace_id: workspaceId, usage_count: { gt: 0 } },
      orderBy: [{ field: 'last_used_at', direction: 'desc' }, { field: 'trigger' }],
      limit,
    });
    return records.map(toCommand);
  }

  /** Commands executed at least once, most executed first (ties: last executed first). */
  async popular(accountId: string, workspaceId: string, limit: number): Promise<Command[]> {
    await this.synced(accountId, workspaceId);
    const records = await this.index.find(accountId, {
      where: { workspace_id: workspaceId, usage_count: { gt: 0 } },
      orderBy: [
        { field: 'usage_count', direction: 'desc' },
        { field: 'last_used_at', direction: 'desc' },
      ],
      limit,
    });
    return records.map(toCommand);
  }

  /**
   * The write that counts one use of the command, to be stored with the execution it starts;
   * it expects the count it read, so a concurrent use makes it fail (`WriteConflictError`) and the
   * caller reads again rather than losing a count.
   */
  usageOp(record: CommandIndexRecord, usedAt: string): WriteOp {
    return this.index.replaceOp({ ...record, usage_count: record.usage_count + 1, last_used_at: usedAt }, { usage_count: record.usage_count });
  }

  /**
   * A `runnable_id` given must name a runnable of the account (another account's reads as
   * missing), even on a command of another type, which drops it: no answer tells one from the other.
   */
  private async checkRunnable(accountId: string, runnableId: string | null | undefined): Promise<void> {
    if (runnableId === undefined || runnableId === null || (await this.runnables.find(accountId, runnableId))) return;
    throw DomainError.invalid(`runnable_id: no runnable ${runnableId.slice(0, 64)} in this account; create it with POST /v1/runnables first`, [
      { path: 'runnable_id', message: 'no such runnable' },
    ]);
  }

  private async all(accountId: string, workspaceId: string): Promise<Command[]> {
    await this.synced(accountId, workspaceId);
    return (await this.index.find(accountId, { where: { workspace_id: workspaceId }, orderBy: [{ field: 'trigger' }] })).map(toCommand);
  }

  private async writableFiles(accountId: string, workspaceId: string): Promise<WorkspaceFileSystem> {
    await this.workspaces.requireWritable(accountId, workspaceId);
    return this.workspaces.files(accountId, workspaceId);
  }

  /** Runs `task` alone among the index updates and command file writes of the workspace, on every instance. */
  private locked<T>(workspaceId: string, task: () => Promise<T>): Promise<T> {
    return this.locks.run(`${workspaceId}/commands`, task);
  }

  /** Brings the workspace's index in line with its command files (404 for a workspace not the account's). */
  private async synced(accountId: string, workspaceId: string): Promise<void> {
    const files = await this.workspaces.files(accountId, workspaceId);
    await this.locked(workspaceId, () => this.syncLocked(accountId, workspaceId, files));
  }

  /**
   * Reads the files added or changed since they were indexed (by size and mtime), drops the
   * records of files that are gone, and keeps usage. A file that is not a valid command is left
   * out of the index, with a warning naming the problem.
   */
  private async syncLocked(accountId: string, workspaceId: string, files: WorkspaceFileSystem): Promise<void> {
    const entries = await listCommandFiles(files);
    const listing = entries.map((entry) => `${entry.trigger}:${entry.stamp}`).join('|');
    if (this.seenListings().get(workspaceId) === listing) return;
    const records = new Map((await this.index.find(accountId, { where: { workspace_id: workspaceId } })).map((record) => [record.trigger, record]));
    const ops: WriteOp[] = [];
    for (const entry of entries) {
      const current = records.get(entry.trigger);
      records.delete(entry.trigger);
      if (current?.file_stamp === entry.stamp) continue;
      const read = entry.size > MAX_COMMAND_FILE_BYTES
        ? { problem: `larger than ${MAX_COMMAND_FILE_BYTES} bytes` }
        : parseCommandFile(entry.trigger, new TextDecoder().decode(await files.readBytes(entry.path)), entry.mtime);
      if ('problem' in read) {
        this.logger.warn({ workspaceId, path: entry.path, problem: read.problem }, 'a command file is not a valid command; it is left out');
        if (current) ops.push(this.index.deleteOp(accountId, current.id));
        continue;
      }
      const record = indexRecord(accountId, workspaceId, read.command, entry.stamp, current);
      ops.push(current ? this.index.replaceOp(record) : this.index.insertOp(record));
    }
    for (const gone of records.values()) ops.push(this.index.deleteOp(accountId, gone.id));
    try {
      if (ops.length > 0) await this.database.write(ops);
    } catch (error) {
      // Another instance indexed the same change first: the next request compares again.
      if (error instanceof WriteConflictError || error instanceof DuplicateIdError) return;
      throw error;
    }
    this.seenListings().set(workspaceId, listing);
  }

  /** Writes the command's file, then its index record (usage kept from `current`). */
  private async store(
    files: WorkspaceFileSystem,
    accountId: string,
    workspaceId: string,
    command: CommandFile,
    current: CommandIndexRecord | undefined,
    exclusive: boolean,
  ): Promise<CommandIndexRecord> {
    const entry = await files.writeFile(commandPath(command.trigger), serializeCommand(command), { exclusive, maxBytes: MAX_COMMAND_FILE_BYTES });
    const record = indexRecord(accountId, workspaceId, command, stampOf(entry), current);
    if (current) await this.index.replace(record);
    else await this.index.insert(record);
    return record;
  }

  private async publish(workspaceId: string, event: { type: string; trigger: string }): Promise<void> {
    try {
      await this.events.publish(workspaceId, event);
    } catch (error) {
      this.logger.warn({ workspaceId, error: (error as Error).message }, 'publishing a command event failed');
    }
  }
}

export type ScoredResult = Command & { score: number };

function toScored(hit: ScoredCommand): ScoredResult {
  return { ...hit.command, score: Math.round(hit.score * 1000) / 1000 };
}

export function toCommand(record: CommandIndexRecord): Command {
  return { ...record.command, usage_count: record.usage_count, last_used_at: record.last_used_at };
}

function indexId(workspaceId: string, trigger: string): string {
  return `${workspaceId}:${trigger}`;
}

function indexRecord(accountId: string, workspaceId: string, command: CommandFile, stamp: string, current: CommandIndexRecord | undefined): CommandIndexRecord {
  return {
    id: indexId(workspaceId, command.trigger),
    account_id: accountId,
    workspace_id: workspaceId,
    trigger: command.trigger,
    type: command.type,
    category: command.category,
    usage_count: current?.usage_count ?? 0,
    last_used_at: current?.last_used_at ?? null,
    file_stamp: stamp,
    command,
  };
}

function stampOf(entry: { size: number; mtime: Date }): string {
  return `${entry.size}:${entry.mtime.getTime()}`;
}

interface CommandFileEntry {
  trigger: string;
  path: string;
  size: number;
  mtime: string;
  stamp: string;
}

/** The command files of the workspace, by trigger; none when the folder does not exist yet. */
async function listCommandFiles(files: WorkspaceFileSystem): Promise<CommandFileEntry[]> {
  const folder = await files.stat(COMMANDS_DIR);
  if (folder?.type !== 'directory') return [];
  const entries: CommandFileEntry[] = [];
  for (const entry of await files.list(COMMANDS_DIR)) {
    const trigger = entry.type === 'file' ? triggerOfFile(entry.path.slice(COMMANDS_DIR.length + 1)) : undefined;
    if (trigger !== undefined) entries.push({ trigger, path: entry.path, size: entry.size, mtime: entry.mtime.toISOString(), stamp: stampOf(entry) });
  }
  return entries.sort((a, b) => a.trigger.localeCompare(b.trigger));
}

function checked<T>(parsed: { success: true; data: T } | { success: false; error: ZodError }): T {
  if (!parsed.success) throw validationError(parsed.error);
  return parsed.data;
}
