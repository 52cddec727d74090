import type { WriteOp } from '../../ports/database';

/**
 * `Database.collectionVersion` of a store that only this handle writes: a count per collection of
 * the writes that touched it, counted once they are applied (a refused write changes nothing).
 */
export class CollectionVersions {
  private readonly counts = new Map<string, number>();

  of(collection: string): number {
    return this.counts.get(collection) ?? 0;
  }

  changed(ops: readonly WriteOp[]): void {
    for (const { op, collection } of ops) if (op !== 'check') this.counts.set(collection, this.of(collection) + 1);
  }
}
