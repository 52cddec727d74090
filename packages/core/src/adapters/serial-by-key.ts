import { LastTaskByKey } from '../domain/last-task-by-key';

/**
 * Runs tasks one at a time per key, in the order they were given, tasks of different keys at once,
 * within this process: the in-process half of the store adapters' `withLock` and the git client's
 * per-repository queue. A failed task does not stop the ones queued behind it.
 */
export class SerialByKey {
  private readonly last = new LastTaskByKey();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const result = (this.last.get(key) ?? Promise.resolve()).then(task);
    this.last.set(key, result);
    return result;
  }
}
