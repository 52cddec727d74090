/**
 * The last task given for each key, as a promise that settles (never rejects) once it is done,
 * forgotten then unless a later one replaced it, so idle keys hold nothing. Queues per key build
 * on it: `SerialByKey` chains each task behind it; `WorkspaceLocks` lets a read wait for it.
 */
export class LastTaskByKey {
  private readonly tails = new Map<string, Promise<void>>();

  /** Records `task` as the last of `key`. */
  set(key: string, task: Promise<unknown>): void {
    const tail = task.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
  }

  /** Settles once the last task of `key` recorded so far is done; undefined when none is pending. */
  get(key: string): Promise<void> | undefined {
    return this.tails.get(key);
  }
}
