import { inject, injectable } from 'inversify';
import { DomainError } from '../errors';
import { Clock } from '../../ports/clock';
import type { WorkspaceFileSystem } from '../../ports/workspace-file-system';
import { WorkspaceEvents } from '../workspace-events/workspace-events';
import type { WorkspaceMetadataContribution, WorkspaceMetadataContributor } from '../workspaces/workspace-metadata';
import { WorkspaceLocks } from '../workspaces/workspace-locks';
import { WorkspaceService } from '../workspaces/workspace-service';
import type {
  PatchThreadInput,
  PatchThreadMetadataInput,
  SaveThreadInput,
  Thread,
  ThreadMetadata,
  UIMessage,
} from './thread-schemas';
import { ThreadStore, threadPath, type ThreadRead } from './thread-store';

/** A change to a thread, given the thread as it is now; answers the thread to write. */
export type ThreadChange = (thread: Thread) => Thread;

/**
 * Threads of a workspace (docs/api.md#threads): files under `.runloom/threads/` plus the metadata
 * index (`ThreadStore`). Every write of one thread runs alone (`WorkspaceLocks`, across instances), reads the file as it
 * is then, and is published as `thread.updated` / `thread.deleted` once durable; so parallel
 * PATCHes and a stream saving its reply never lose each other's messages.
 */
@injectable()
export class ThreadService implements WorkspaceMetadataContributor {
  constructor(
    /** Every write of one thread, across instances sharing the workspaces dir. */
    @inject(WorkspaceLocks) private readonly locks: WorkspaceLocks,
    @inject(WorkspaceService) private readonly workspaces: WorkspaceService,
    @inject(ThreadStore) private readonly store: ThreadStore,
    @inject(WorkspaceEvents) private readonly events: WorkspaceEvents,
    @inject(Clock) private readonly clock: Clock,
  ) {}

  /** The workspace's threads as the index knows them, most recently updated first. */
  async list(accountId: string, workspaceId: string, page: { limit: number; offset: number }): Promise<ThreadMetadata[]> {
    await this.workspaces.require(accountId, workspaceId);
    return this.store.list(accountId, workspaceId, page);
  }

  /** The workspace summary's thread count and latest thread change, from the index. */
  async contribute(accountId: string, workspaceId: string): Promise<WorkspaceMetadataContribution> {
    const [latest] = await this.store.list(accountId, workspaceId, { limit: 1, offset: 0 });
    return { thread_count: await this.store.count(accountId, workspaceId), last_activity_at: latest?.updated_at ?? null };
  }

  /**
   * The thread; 404 without a file, 409 when the file is not a thread (the index then says so
   * too). Read once the writes of the thread queued before it in this process are done, so it
   * holds a reply saved just as its stream ended (see `ThreadStreams`).
   */
  async get(accountId: string, workspaceId: string, threadId: string): Promise<Thread> {
    const key = lockKey(workspaceId, threadId);
    await this.locks.queued(key);
    const files = await this.workspaces.files(accountId, workspaceId);
    const read = await this.store.read(files, threadId);
    if (read.kind === 'broken') await this.locks.run(key, () => this.store.reindex(accountId, workspaceId, threadId, read));
    return readable(read, threadId);
  }

  /** Creates the thread or overwrites it whole (a broken file included); `created` tells which. */
  async save(accountId: string, workspaceId: string, threadId: string, input: SaveThreadInput): Promise<{ created: boolean; thread: Thread }> {
    const files = await this.writableFiles(accountId, workspaceId);
    return this.locks.run(lockKey(workspaceId, threadId), async () => {
      const read = await this.store.read(files, threadId);
      const now = this.clock.now().toISOString();
      const thread: Thread = {
        id: threadId,
        title: input.title ?? null,
        messages: input.messages ?? [],
        summary: input.summary ?? null,
        metadata: input.metadata ?? {},
        created_at: read.kind === 'thread' ? read.thread.created_at : now,
        updated_at: now,
      };
      await this.commit(files, accountId, workspaceId, thread);
      return { created: read.kind === 'missing', thread };
    });
  }

  /** Changes the given fields; `messages` merge by id (see `patchThreadBody`). */
  async patch(accountId: string, workspaceId: string, threadId: string, input: PatchThreadInput): Promise<Thread> {
    await this.workspaces.requireWritable(accountId, workspaceId);
    return this.change(accountId, workspaceId, threadId, (thread) => ({
      ...thread,
      title: input.title === undefined ? thread.title : input.title,
      summary: input.summary === undefined ? thread.summary : input.summary,
      metadata: input.metadata ?? thread.metadata,
      messages: input.messages ? mergeMessages(thread.messages, input.messages) : thread.messages,
    }));
  }

  /** Title and metadata only; the messages stay as they are. */
  async patchMetadata(accountId: string, workspaceId: string, threadId: string, input: PatchThreadMetadataInput): Promise<Thread> {
    await this.workspaces.requireWritable(accountId, workspaceId);
    return this.change(accountId, workspaceId, threadId, (thread) => ({
      ...thread,
      title: input.title === undefined ? thread.title : input.title,
      metadata: input.metadata ?? thread.metadata,
    }));
  }

  async delete(accountId: string, workspaceId: string, threadId: string): Promise<void> {
    const files = await this.writableFiles(accountId, workspaceId);
    await this.locks.run(lockKey(workspaceId, threadId), async () => {
      if ((await files.stat(threadPath(threadId))) === undefined) throw DomainError.notFound(`thread ${threadId}`);
      await this.store.remove(files, accountId, workspaceId, threadId);
      await this.events.publish(workspaceId, { type: 'thread.deleted', threadId });
    });
  }

  /**
   * Makes the index agree with the files: every thread file read again (a broken one listed with
   * its problem), rows without a file dropped. Each thread under its own lock, so a write running
   * meanwhile is never undone by an older read.
   */
  async rebuildMetadata(accountId: string, workspaceId: string): Promise<{ threads: number; problems: number }> {
    const files = await this.workspaces.files(accountId, workspaceId);
    const ids = new Set([...(await this.store.fileIds(files)), ...(await this.store.indexedIds(accountId, workspaceId))]);
    const reads = await Promise.all(
      [...ids].map((threadId) =>
        this.locks.run(lockKey(workspaceId, threadId), async () => {
          const read = await this.store.read(files, threadId);
          await this.store.reindex(accountId, workspaceId, threadId, read);
          return read;
        }),
      ),
    );
    return { threads: reads.filter((read) => read.kind !== 'missing').length, problems: reads.filter((read) => read.kind === 'broken').length };
  }

  /**
   * Applies `change` to the thread as it is now, alone among the writers of this thread, and
   * publishes it: what streams use to append the user message and save the reply. Queued when
   * called (a read called after it sees the change). No archived check here: a reply accepted
   * before the workspace was archived is still kept.
   */
  change(accountId: string, workspaceId: string, threadId: string, change: ThreadChange): Promise<Thread> {
    return this.locks.run(lockKey(workspaceId, threadId), () => this.apply(accountId, workspaceId, threadId, change));
  }

  /**
   * `change`, queued when called but applied once `ready` answers: not at all when it answers
   * false, failing when it rejects. A stream's writes take their places among the thread's writes
   * (reads after them wait for them) before what they depend on is done.
   */
  changeWhen(accountId: string, workspaceId: string, threadId: string, ready: Promise<boolean>, change: ThreadChange): Promise<void> {
    return this.locks.run(lockKey(workspaceId, threadId), async () => {
      if (await ready) await this.apply(accountId, workspaceId, threadId, change);
    });
  }

  private async apply(accountId: string, workspaceId: string, threadId: string, change: ThreadChange): Promise<Thread> {
    const files = await this.workspaces.files(accountId, workspaceId);
    const current = readable(await this.store.read(files, threadId), threadId);
    const thread = { ...change(current), id: threadId, created_at: current.created_at, updated_at: this.clock.now().toISOString() };
    await this.commit(files, accountId, workspaceId, thread);
    return thread;
  }

  private async writableFiles(accountId: string, workspaceId: string): Promise<WorkspaceFileSystem> {
    await this.workspaces.requireWritable(accountId, workspaceId);
    return this.workspaces.files(accountId, workspaceId);
  }

  private async commit(files: WorkspaceFileSystem, accountId: string, workspaceId: string, thread: Thread): Promise<void> {
    await this.store.write(files, accountId, workspaceId, thread);
    await this.events.publish(workspaceId, {
      type: 'thread.updated',
      threadId: thread.id,
      title: thread.title,
      message_count: thread.messages.length,
      updated_at: thread.updated_at,
    });
  }
}

function lockKey(workspaceId: string, threadId: string): string {
  return `${workspaceId}/${threadId}`;
}

function readable(read: ThreadRead, threadId: string): Thread {
  if (read.kind === 'missing') throw DomainError.notFound(`thread ${threadId}`);
  if (read.kind === 'broken') {
    throw DomainError.conflict(`${read.problem}; fix the file (then POST …/threads/rebuild-metadata) or overwrite it with POST …/thread/${threadId}/save`);
  }
  return read.thread;
}

/** `incoming` merged into `current` by id: known ids replaced in place, new ones appended in order. */
export function mergeMessages(current: readonly UIMessage[], incoming: readonly UIMessage[]): UIMessage[] {
  const merged = [...current];
  const positions = new Map(merged.map((message, index) => [message.id, index]));
  for (const message of incoming) {
    const at = positions.get(message.id);
    if (at === undefined) {
      positions.set(message.id, merged.length);
      merged.push(message);
    } else {
      merged[at] = message;
    }
  }
  return merged;
}
