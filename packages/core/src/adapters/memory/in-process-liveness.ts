import type { LivenessHold } from '../../ports/database';

/**
 * `Database` liveness for a store only this process uses (memory, sql.js under its directory lock):
 * a holder is live while this process holds it, so whatever an earlier process held is dead.
 */
export class InProcessLiveness {
  private readonly held = new Set<string>();

  async hold(holder: string): Promise<LivenessHold> {
    if (this.held.has(holder)) throw new Error(`liveness holder ${holder} is already held`);
    this.held.add(holder);
    return {
      holder,
      release: async () => {
        this.held.delete(holder);
      },
    };
  }

  async live(holders: readonly string[]): Promise<Set<string>> {
    return new Set(holders.filter((holder) => this.held.has(holder)));
  }

  /** Every hold ends (the store is closing). */
  clear(): void {
    this.held.clear();
  }
}
