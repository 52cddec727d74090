/** A slot was taken, or the account's slots and line are full and the run should be parked. */
export type SlotOutcome = 'acquired' | 'full';

/**
 * Per-account execution slots of this process: at most `perAccount` runs of one account execute
 * at once. A run that finds its account's slots taken waits in line holding its job, as long as
 * the line is shorter than `perAccount`; past that it is parked (its job given up, so it holds
 * none of the server's slots and other accounts' runs go ahead). A freed slot goes to the first
 * in line, else it is reserved for the run parked longest, which is then woken.
 */
export class AccountSlots {
  private readonly accounts = new Map<string, AccountState>();

  constructor(private readonly perAccount: number) {
    if (!Number.isInteger(perAccount) || perAccount < 1) throw new Error('runConcurrencyPerAccount must be a whole number ≥ 1');
  }

  /**
   * Takes a slot: a free one, the one reserved for this run, or one handed over after waiting in
   * line. `full` when the line is full too. Rejects with the signal's reason when it aborts while
   * the run waits.
   */
  async acquire(accountId: string, runId: string, signal: AbortSignal): Promise<SlotOutcome> {
    signal.throwIfAborted();
    const account = this.account(accountId);
    if (account.reserved.delete(runId)) return 'acquired';
    if (account.active < this.perAccount) {
      account.active += 1;
      return 'acquired';
    }
    // Behind parked runs, a newcomer parks too: the line must not keep them waiting for ever.
    if (account.line.length >= this.perAccount || account.parked.size > 0) return 'full';
    await new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        account.line.splice(account.line.indexOf(turn), 1);
        this.forget(accountId, account);
        reject(signal.reason);
      };
      const turn = (): void => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      account.line.push(turn);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    return 'acquired';
  }

  /**
   * Parks a run whose job has been given up. When a slot has come free meanwhile, it is reserved
   * for the run parked longest at once, and that run is answered to wake.
   */
  park(accountId: string, runId: string): string | undefined {
    const account = this.account(accountId);
    account.parked.add(runId);
    if (account.active >= this.perAccount) return undefined;
    account.active += 1;
    return this.reserveForParked(account);
  }

  /** Gives a slot back; answers the parked run to wake for it (the slot is kept for that run). */
  release(accountId: string): string | undefined {
    const account = this.accounts.get(accountId);
    if (!account) return undefined;
    const next = account.line.shift();
    if (next) {
      next();
      return undefined;
    }
    const parked = this.reserveForParked(account);
    if (parked !== undefined) return parked;
    account.active -= 1;
    this.forget(accountId, account);
    return undefined;
  }

  /** A woken run that will not execute (it finished meanwhile) gives its reserved slot up. */
  forfeit(accountId: string, runId: string): string | undefined {
    const account = this.accounts.get(accountId);
    if (!account?.reserved.delete(runId)) return undefined;
    return this.release(accountId);
  }

  /** Keeps a taken slot for the run parked longest; undefined when none is parked. */
  private reserveForParked(account: AccountState): string | undefined {
    const next = account.parked.values().next();
    if (next.done) return undefined;
    account.parked.delete(next.value);
    account.reserved.add(next.value);
    return next.value;
  }

  private account(accountId: string): AccountState {
    let account = this.accounts.get(accountId);
    if (!account) {
      account = { active: 0, line: [], parked: new Set(), reserved: new Set() };
      this.accounts.set(accountId, account);
    }
    return account;
  }

  private forget(accountId: string, account: AccountState): void {
    if (account.active === 0 && account.line.length === 0 && account.parked.size === 0 && account.reserved.size === 0) {
      this.accounts.delete(accountId);
    }
  }
}

interface AccountState {
  /** Slots taken: executing runs plus slots reserved for woken runs. */
  active: number;
  /** Runs waiting with their jobs, first come first served. */
  line: (() => void)[];
  /** Runs without a job, oldest first (a Set keeps insertion order). */
  parked: Set<string>;
  /** Woken runs a slot is kept for. */
  reserved: Set<string>;
}
