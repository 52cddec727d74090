/**
 * Items waiting to be handled in batches, oldest first: a batch of at most `maxPerBatch` starts
 * while fewer than `maxInFlight` are under way, and what is queued meanwhile waits to share the
 * next one (one round trip for all of it). `handle` settles each item of its batch and never rejects.
 */
export class BatchQueue<T> {
  private readonly queued: T[] = [];
  private inFlight = 0;

  constructor(
    private readonly maxInFlight: number,
    private readonly maxPerBatch: number,
    private readonly handle: (batch: T[]) => Promise<void>,
  ) {}

  push(item: T): void {
    this.queued.push(item);
    this.start();
  }

  private start(): void {
    while (this.queued.length > 0 && this.inFlight < this.maxInFlight) {
      const batch = this.queued.splice(0, this.maxPerBatch);
      this.inFlight += 1;
      void this.handle(batch).finally(() => {
        this.inFlight -= 1;
        this.start();
      });
    }
  }
}
