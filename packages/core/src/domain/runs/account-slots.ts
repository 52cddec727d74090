/**
 * Per-account execution slots of this process: at most `perAccount` runs of one account execute
 * at once. A run that finds its account's slots taken is parked here (without a job, so it holds
 * none of the server's slots and other accounts' runs go ahead); each freed slot wakes the run of
 * that account parked longest.
 */
export class AccountSlots {
  private readonly active = new Map<string, number>();
  /** Parked run ids per account, oldest first (a Set keeps insertion order and drops duplicates). */
  private readonly parked = new Map<string, Set<string>>();

  constructor(private readonly perAccount: number) {
    if (!Number.isInteger(perAccount) || perAccount < 1) throw new Error('runConcurrencyPerAccount must be a whole number ≥ 1');
  }

  /** Takes a slot of `accountId` when one is free. */
  tryAcquire(accountId: string): boolean {
    const active = this.active.get(accountId) ?? 0;
    if (active >= this.perAccount) return false;
    this.active.set(accountId, active + 1);
    return true;
  }

  /** Gives a slot back; answers the parked run to wake for it, if any. */
  release(accountId: string): string | undefined {
    const active = (this.active.get(accountId) ?? 1) - 1;
    if (active > 0) this.active.set(accountId, active);
    else this.active.delete(accountId);
    return this.unpark(accountId);
  }

  /** Parks a run until a slot of its account frees; answers a run to wake at once when one is free already. */
  park(accountId: string, runId: string): string | undefined {
    let runs = this.parked.get(accountId);
    if (!runs) {
      runs = new Set();
      this.parked.set(accountId, runs);
    }
    runs.add(runId);
    return (this.active.get(accountId) ?? 0) < this.perAccount ? this.unpark(accountId) : undefined;
  }

  /** Runs of the account executing now. */
  activeRuns(accountId: string): number {
    return this.active.get(accountId) ?? 0;
  }

  private unpark(accountId: string): string | undefined {
    const runs = this.parked.get(accountId);
    const next = runs?.values().next();
    if (!runs || !next || next.done) return undefined;
    runs.delete(next.value);
    if (runs.size === 0) this.parked.delete(accountId);
    return next.value;
  }
}
