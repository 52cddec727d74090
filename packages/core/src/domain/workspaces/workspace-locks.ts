import { inject, injectable } from 'inversify';
import { Database } from '../../ports/database';

/**
 * Locks over the files of a workspace, held in the database (`Database.withLock`), so instances
 * sharing a workspaces dir exclude each other as well as this process's callers: a
 * read-modify-write of a thread file, of the configuration or of the command files and their
 * index runs alone (ARCHITECTURE.md, "Beyond one machine"). Tasks never take another lock.
 */
@injectable()
export class WorkspaceLocks {
  constructor(@inject(Database) private readonly database: Database) {}

  /**
   * Runs `task` alone among the holders of `key` (the workspace id for its configuration,
   * `<workspace>/commands`, `<workspace>/<thread>`), in call order within this process.
   */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    return this.database.withLock(`workspace:${key}`, task);
  }
}
