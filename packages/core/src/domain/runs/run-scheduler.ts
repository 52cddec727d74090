/** A slot was taken, or the account's line is full and the run should be parked. */
export type SlotOutcome = 'acquired' | 'full';

/** A parked run whose turn has come: a slot is kept for it, and its job must be queued again. */
export interface WakeUp {
  accountId: string;
  runId: string;
}

export interface RunSchedulerLimits {
  /** Runs in flight at once in this process, every account together (`runConcurrency`). */
  maxInFlight: number;
  /** Runs of one account in flight at once (`runConcurrencyPerAccount`). */
  maxInFlightPerAccount: number;
  /** Runs of one account waiting in line with their jobs; past that they are parked. Default: `maxInFlightPerAccount`. */
  maxWaitingPerAccount?: number;
}

/**
 * Who runs next (ARCHITECTURE.md, "Run scheduling"). A run is in flight from the moment it has a
 * slot until it ends, waiting on a vendor, a tool or a nested run included: a slot is a little
 * memory, not a worker, so the caps are large (thousands) and exist to bound memory and to share
 * the server between accounts.
 *
 * Fairness: every account has its own line; when a slot comes free it goes to the waiting account
 * with the fewest runs in flight (round robin among equals), never simply to the oldest waiter. So
 * one account's 10,000 queued runs make another account's run wait for the next free slot at most,
 * never behind them. Within an account, first come first served.
 *
 * A run waits in line holding its job; past `maxWaitingPerAccount` it is parked: its job is given
 * up (so it holds nothing of the server) and, when its turn comes, a slot is kept for it and it is
 * answered as a `WakeUp` for the engine to queue its job again.
 */
export class RunScheduler {
  private readonly maxInFlight: number;
  private readonly maxPerAccount: number;
  private readonly maxWaiting: number;
  private readonly accounts = new Map<string, AccountState>();
  /** Accounts with someone waiting (in line or parked), in round-robin order; each at most once. */
  private readonly turns: string[] = [];
  private inFlight = 0;

  constructor(limits: RunSchedulerLimits) {
    this.maxInFlight = wholeAtLeastOne(limits.maxInFlight, 'runConcurrency');
    this.maxPerAccount = wholeAtLeastOne(limits.maxInFlightPerAccount, 'runConcurrencyPerAccount');
    this.maxWaiting = wholeAtLeastOne(limits.maxWaitingPerAccount ?? this.maxPerAccount, 'maxWaitingPerAccount');
  }

  /** Runs holding a slot (executing, waiting on a vendor, or woken and about to start). */
  get running(): number {
    return this.inFlight;
  }

  /**
   * Takes a slot: the one kept for this run, a free one, or one given after waiting in line.
   * `full` when the account's line is full (or runs of the account are parked: a newcomer must not
   * pass them). Rejects with the signal's reason when it aborts while the run waits.
   */
  async acquire(accountId: string, runId: string, signal: AbortSignal): Promise<SlotOutcome> {
    signal.throwIfAborted();
    const account = this.account(accountId);
    if (account.reserved.delete(runId)) return 'acquired';
    if (this.takeIfFree(account)) return 'acquired';
    if (account.line.length >= this.maxWaiting || account.parked.size > 0) {
      this.forget(accountId, account);
      return 'full';
    }
    await new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = (): void => {
        account.line.splice(account.line.indexOf(waiter), 1);
        this.dropTurnIfIdle(accountId, account);
        this.forget(accountId, account);
        reject(signal.reason);
      };
      account.line.push(waiter);
      this.addTurn(accountId);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    return 'acquired';
  }

  /**
   * Takes a slot at once if one is free and nobody of the account waits before it (the same test
   * `acquire` starts with); false, taking nothing, otherwise.
   */
  tryAcquire(accountId: string): boolean {
    const account = this.account(accountId);
    if (this.takeIfFree(account)) return true;
    this.forget(accountId, account);
    return false;
  }

  /**
   * Parks a run whose job has been given up. Answers the runs to wake (a slot is kept for each):
   * this one itself when a slot came free meanwhile.
   */
  park(accountId: string, runId: string): WakeUp[] {
    const account = this.account(accountId);
    account.parked.add(runId);
    this.addTurn(accountId);
    return this.dispatch();
  }

  /** Gives a slot back; answers the parked runs to wake for the slots now free. */
  release(accountId: string): WakeUp[] {
    const account = this.accounts.get(accountId);
    if (!account || account.active === 0) return [];
    account.active -= 1;
    this.inFlight -= 1;
    const woken = this.dispatch();
    this.forget(accountId, account);
    return woken;
  }

  /** A woken run that will not execute (it finished meanwhile, or its job could not be queued) gives its kept slot up. */
  forfeit(accountId: string, runId: string): WakeUp[] {
    const account = this.accounts.get(accountId);
    if (!account?.reserved.delete(runId)) return [];
    return this.release(accountId);
  }

  private takeIfFree(account: AccountState): boolean {
    if (account.line.length > 0 || account.parked.size > 0 || !this.hasRoom(account)) return false;
    this.take(account);
    return true;
  }

  private hasRoom(account: AccountState): boolean {
    return this.inFlight < this.maxInFlight && account.active < this.maxPerAccount;
  }

  private take(account: AccountState): void {
    account.active += 1;
    this.inFlight += 1;
  }

  /**
   * Hands free slots out: each to the waiting account with the fewest runs in flight (under its
   * cap), ties to the one whose turn is oldest, a waiter in line first, else the account's run
   * parked longest (answered to wake). A served account goes to the back of the round.
   */
  private dispatch(): WakeUp[] {
    const woken: WakeUp[] = [];
    while (this.inFlight < this.maxInFlight) {
      let chosen = -1;
      let fewest = this.maxPerAccount;
      for (let index = 0; index < this.turns.length; index++) {
        const active = this.accounts.get(this.turns[index]!)!.active;
        if (active < fewest) {
          chosen = index;
          fewest = active;
        }
      }
      if (chosen < 0) break;
      const accountId = this.turns.splice(chosen, 1)[0]!;
      const account = this.accounts.get(accountId)!;
      this.take(account);
      const waiter = account.line.shift();
      if (waiter) {
        waiter.grant();
      } else {
        const runId = account.parked.values().next().value!;
        account.parked.delete(runId);
        account.reserved.add(runId);
        woken.push({ accountId, runId });
      }
      if (account.line.length > 0 || account.parked.size > 0) this.turns.push(accountId);
    }
    return woken;
  }

  private addTurn(accountId: string): void {
    if (!this.turns.includes(accountId)) this.turns.push(accountId);
  }

  private dropTurnIfIdle(accountId: string, account: AccountState): void {
    if (account.line.length > 0 || account.parked.size > 0) return;
    const index = this.turns.indexOf(accountId);
    if (index >= 0) this.turns.splice(index, 1);
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

interface Waiter {
  grant(): void;
}

interface AccountState {
  /** Slots taken: runs in flight plus slots kept for woken runs. */
  active: number;
  /** Runs waiting with their jobs, first come first served. */
  line: Waiter[];
  /** Runs without a job, oldest first (a Set keeps insertion order). */
  parked: Set<string>;
  /** Woken runs a slot is kept for. */
  reserved: Set<string>;
}

function wholeAtLeastOne(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a whole number ≥ 1`);
  return value;
}
