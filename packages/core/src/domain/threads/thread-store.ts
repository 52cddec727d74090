import { inject, injectable } from 'inversify';
import { DomainError } from '../errors';
import { Database, type Migration } from '../../ports/database';
import {
  type WorkspaceFileSystem,
  WorkspaceFileTooLargeError,
  WorkspaceNotFoundError,
} from '../../ports/workspace-file-system';
import { type AccountRecord, Repository } from '../storage/repository';
import { threadSchema, type Thread, type ThreadMetadata } from './thread-schemas';

/** Where threads live in a workspace: one JSON file per thread, so they travel with the folder. */
export const THREADS_DIR = '.runloom/threads';

/** Largest thread file written: far above any chat, well below what a read should hold in memory. */
export const MAX_THREAD_BYTES = 32 * 1024 * 1024;

const INDEX = 'thread_index';

export const threadIndexMigrations: Migration[] = [
  {
    id: 'threads/001-create-index',
    steps: [{ createCollection: INDEX, fields: { account_id: 'text', workspace_id: 'text', updated_at: 'text' } }],
  },
];

/** One row of the metadata index: what listing answers without opening every file. */
interface ThreadIndexRecord extends AccountRecord {
  workspace_id: string;
  thread_id: string;
  title: string | null;
  message_count: number;
  created_at: string | null;
  updated_at: string;
  problem: string | null;
}

/** A thread file as read: the thread, no file, or a file that is not a thread (and why). */
export type ThreadRead = { kind: 'thread'; thread: Thread } | { kind: 'missing' } | { kind: 'broken'; problem: string; mtime: Date };

export function threadPath(threadId: string): string {
  return `${THREADS_DIR}/${threadId}.json`;
}

/**
 * The files of threads and their metadata index. The files are the truth (they may be edited, or
 * arrive with `git pull`); the index only makes listing cheap, and `rebuild` makes it agree with
 * the files again. Callers serialise the writes of one thread (`ThreadService`).
 */
@injectable()
export class ThreadStore {
  private readonly index: Repository<ThreadIndexRecord>;

  constructor(@inject(Database) database: Database) {
    this.index = new Repository(database, INDEX);
  }

  async read(files: WorkspaceFileSystem, threadId: string): Promise<ThreadRead> {
    let bytes: Uint8Array;
    try {
      bytes = await files.readBytes(threadPath(threadId));
    } catch (error) {
      if (error instanceof WorkspaceNotFoundError) return { kind: 'missing' };
      throw error;
    }
    return parseThreadFile(threadId, bytes, async () => (await files.stat(threadPath(threadId)))?.mtime ?? new Date(0));
  }

  /** Writes the file atomically, then its index row. */
  async write(files: WorkspaceFileSystem, accountId: string, workspaceId: string, thread: Thread): Promise<void> {
    try {
      await files.writeFile(threadPath(thread.id), JSON.stringify(thread, null, 2), { maxBytes: MAX_THREAD_BYTES });
    } catch (error) {
      if (error instanceof WorkspaceFileTooLargeError) {
        throw DomainError.tooLarge(`the thread would be over ${MAX_THREAD_BYTES} bytes; save it with fewer or shorter messages`);
      }
      throw error;
    }
    await this.putIndex(indexRecord(accountId, workspaceId, thread.id, { kind: 'thread', thread }));
  }

  async remove(files: WorkspaceFileSystem, accountId: string, workspaceId: string, threadId: string): Promise<void> {
    await files.delete(threadPath(threadId));
    await this.dropIndex(accountId, workspaceId, threadId);
  }

  /** Records in the index what `read` found: the thread's metadata, or the problem of its file. */
  async reindex(accountId: string, workspaceId: string, threadId: string, read: ThreadRead): Promise<void> {
    if (read.kind === 'missing') await this.dropIndex(accountId, workspaceId, threadId);
    else await this.putIndex(indexRecord(accountId, workspaceId, threadId, read));
  }

  /** The workspace's threads from the index, most recently updated first. */
  async list(accountId: string, workspaceId: string, page: { limit: number; offset: number }): Promise<ThreadMetadata[]> {
    const rows = await this.index.find(accountId, {
      where: { workspace_id: workspaceId },
      orderBy: [{ field: 'updated_at', direction: 'desc' }],
      limit: page.limit,
      offset: page.offset,
    });
    return rows.map(toMetadata);
  }

  /** Ids of the threads the index holds for the workspace. */
  async indexedIds(accountId: string, workspaceId: string): Promise<string[]> {
    return (await this.index.find(accountId, { where: { workspace_id: workspaceId } })).map((row) => row.thread_id);
  }

  async count(accountId: string, workspaceId: string): Promise<number> {
    return this.index.count(accountId, { workspace_id: workspaceId });
  }

  /** Ids of the thread files in the workspace, whatever their content. */
  async fileIds(files: WorkspaceFileSystem): Promise<string[]> {
    const directory = await files.stat(THREADS_DIR);
    if (directory?.type !== 'directory') return [];
    return (await files.list(THREADS_DIR))
      .filter((entry) => entry.type === 'file' && entry.path.endsWith('.json'))
      .map((entry) => entry.path.slice(THREADS_DIR.length + 1, -'.json'.length))
      .filter((id) => /^[A-Za-z0-9_-]{1,128}$/.test(id));
  }

  private async putIndex(record: ThreadIndexRecord): Promise<void> {
    // Writes of one thread are serialised by the caller, so read-then-write cannot race itself.
    const existing = await this.index.get(record.account_id, record.id);
    if (existing) await this.index.replace(record);
    else await this.index.insert(record);
  }

  private async dropIndex(accountId: string, workspaceId: string, threadId: string): Promise<void> {
    const id = indexId(workspaceId, threadId);
    if (await this.index.get(accountId, id)) await this.index.delete(accountId, id);
  }
}

async function parseThreadFile(threadId: string, bytes: Uint8Array, mtime: () => Promise<Date>): Promise<ThreadRead> {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (error) {
    return { kind: 'broken', problem: `${threadPath(threadId)} is not valid JSON (${(error as Error).message})`, mtime: await mtime() };
  }
  const parsed = threadSchema.safeParse({ ...(typeof value === 'object' && value !== null ? value : {}), id: threadId });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? issue.path.join('.') : 'the file';
    return { kind: 'broken', problem: `${threadPath(threadId)} is not a thread: ${where}: ${issue.message}`, mtime: await mtime() };
  }
  return { kind: 'thread', thread: parsed.data };
}

function indexId(workspaceId: string, threadId: string): string {
  return `${workspaceId}/${threadId}`;
}

function indexRecord(accountId: string, workspaceId: string, threadId: string, read: Exclude<ThreadRead, { kind: 'missing' }>): ThreadIndexRecord {
  const base = { id: indexId(workspaceId, threadId), account_id: accountId, workspace_id: workspaceId, thread_id: threadId };
  if (read.kind === 'broken') {
    return { ...base, title: null, message_count: 0, created_at: null, updated_at: read.mtime.toISOString(), problem: read.problem };
  }
  const { thread } = read;
  return {
    ...base,
    title: thread.title,
    message_count: thread.messages.length,
    created_at: thread.created_at,
    updated_at: thread.updated_at,
    problem: null,
  };
}

function toMetadata(row: ThreadIndexRecord): ThreadMetadata {
  return {
    id: row.thread_id,
    workspace_id: row.workspace_id,
    title: row.title,
    message_count: row.message_count,
    created_at: row.created_at,
    updated_at: row.updated_at,
    problem: row.problem,
  };
}
