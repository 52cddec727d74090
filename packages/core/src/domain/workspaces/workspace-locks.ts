import { inject, injectable } from 'inversify';
import { Database } from '../../ports/database';
import { LastTaskByKey } from '../last-task-by-key';

/**
 * Locks over the files of a workspace, held in the database (`Database.withLock`), so instances
 * sharing a workspaces dir exclude each other as well as this process's callers: a
 * read-modify-write of a thread file, of the configuration or of the command files and their
 * index runs alone (ARCHITECTURE.md, "Beyond one machine"). Tasks never take another lock.
 */
@injectable()
export class WorkspaceLocks {
  /** The last task of each key this process has queued, until it is done (see `queued`). */
  private readonly last = new LastTaskByKey();

  constructor(@inject(Database) private readonly database: Database) {}

  /**
   * Runs `task` alone among the holders of `key` (the workspace id for its configuration,
   * `<workspace>/commands`, `<workspace>/<thread>`), in call order within this process.
   */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const result = this.database.withLock(`workspace:${key}`, task);
    this.last.set(key, result);
    return result;
  }

  /**
   * Settles once the tasks of `key` this process queued before the call are done, without taking
   * the lock (no database round trip): a read that must see this process's own writes, such as a
   * thread's reply saved just as its stream ended.
   */
  async queued(key: string): Promise<void> {
    await this.last.get(key);
  }
}
