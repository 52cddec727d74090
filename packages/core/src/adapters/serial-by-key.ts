/**
 * Runs tasks one at a time per key, in the order they were given, tasks of different keys at once,
 * within this process: the in-process half of the store adapters' `withLock` and the git client's
 * per-repository queue. A failed task does not stop the ones queued behind it.
 */
export class SerialByKey {
  private readonly tails = new Map<string, Promise<void>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    // Forget the key once its queue is empty, so idle workspaces hold nothing.
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }
}
