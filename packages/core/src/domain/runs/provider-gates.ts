import type { Clock, Timer } from '../../ports/clock';

/** An account's limits on one provider (`max_concurrency`, `requests_per_minute`); null: none. */
export interface ProviderLimits {
  maxConcurrency: number | null;
  requestsPerMinute: number | null;
}

export const NO_PROVIDER_LIMITS: ProviderLimits = { maxConcurrency: null, requestsPerMinute: null };

/** A call's permission to go to the vendor; released when the call ends, whatever its outcome. */
export interface ProviderPermit {
  release(): void;
}

/**
 * Per account and provider, who may call the vendor now (ARCHITECTURE.md, "Run scheduling"): at
 * most `maxConcurrency` calls at once, `requestsPerMinute` (a token bucket holding a minute's
 * worth), and nobody while the vendor asked to back off (a 429 or `retry-after`). A call that may
 * not go yet waits here as a promise, first come first served, holding no connection and no
 * vendor slot; its run stays in flight, which costs memory only.
 */
export class ProviderGates {
  private readonly gates = new Map<string, Gate>();

  constructor(private readonly clock: Clock) {}

  /** Waits for the permission to call `provider` for `accountId`; rejects with the signal's reason when it aborts first. */
  acquire(accountId: string, provider: string, limits: ProviderLimits, signal: AbortSignal): Promise<ProviderPermit> {
    signal.throwIfAborted();
    const key = `${accountId}\u0000${provider}`;
    const gate = this.gate(key, limits);
    return new Promise<ProviderPermit>((resolve, reject) => {
      const waiter: GateWaiter = {
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          resolve(this.permit(key, gate));
        },
      };
      const onAbort = (): void => {
        const index = gate.waiters.indexOf(waiter);
        if (index >= 0) gate.waiters.splice(index, 1);
        this.forgetIfIdle(key, gate);
        reject(signal.reason);
      };
      gate.waiters.push(waiter);
      signal.addEventListener('abort', onAbort, { once: true });
      this.pump(key, gate);
    });
  }

  /** The vendor asked this account to slow down on `provider`: nobody calls it for `delayMs`. */
  backOff(accountId: string, provider: string, delayMs: number): void {
    const key = `${accountId}\u0000${provider}`;
    const gate = this.gate(key, undefined);
    gate.backOffUntil = Math.max(gate.backOffUntil, this.now() + Math.max(0, delayMs));
    this.pump(key, gate);
  }

  /** Waits `ms` (a retry's delay) without holding a permit; rejects when the signal aborts first. */
  delay(ms: number, signal: AbortSignal): Promise<void> {
    return this.clock.sleep(ms, signal);
  }

  private gate(key: string, limits: ProviderLimits | undefined): Gate {
    let gate = this.gates.get(key);
    if (!gate) {
      const rpm = limits?.requestsPerMinute ?? null;
      gate = { limits: limits ?? NO_PROVIDER_LIMITS, active: 0, waiters: [], backOffUntil: 0, tokens: rpm ?? 0, refilledAt: this.now(), timer: undefined };
      this.gates.set(key, gate);
    } else if (limits) {
      // A bucket that starts now starts full.
      if (gate.limits.requestsPerMinute === null && limits.requestsPerMinute !== null) gate.tokens = limits.requestsPerMinute;
      gate.limits = limits;
    }
    return gate;
  }

  private permit(key: string, gate: Gate): ProviderPermit {
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        gate.active -= 1;
        this.pump(key, gate);
      },
    };
  }

  /** Grants what the limits allow now; when only time can free the next call, wakes up then. */
  private pump(key: string, gate: Gate): void {
    const now = this.now();
    const rpm = gate.limits.requestsPerMinute;
    if (rpm !== null) {
      gate.tokens = Math.min(rpm, gate.tokens + ((now - gate.refilledAt) * rpm) / 60_000);
      gate.refilledAt = now;
    }
    while (gate.waiters.length > 0) {
      if (gate.limits.maxConcurrency !== null && gate.active >= gate.limits.maxConcurrency) return;
      let waitMs = gate.backOffUntil - now;
      if (rpm !== null && gate.tokens < 1) waitMs = Math.max(waitMs, Math.ceil(((1 - gate.tokens) * 60_000) / rpm));
      if (waitMs > 0) {
        this.wakeIn(key, gate, waitMs);
        return;
      }
      if (rpm !== null) gate.tokens -= 1;
      gate.active += 1;
      gate.waiters.shift()!.grant();
    }
    this.forgetIfIdle(key, gate);
  }

  private wakeIn(key: string, gate: Gate, ms: number): void {
    gate.timer?.cancel();
    gate.timer = this.clock.setTimeout(() => {
      gate.timer = undefined;
      this.pump(key, gate);
    }, ms);
  }

  /** A gate with nothing to remember (no call, no waiter, no back-off, a full bucket) is dropped. */
  private forgetIfIdle(key: string, gate: Gate): void {
    if (gate.active > 0 || gate.waiters.length > 0 || gate.backOffUntil > this.now()) return;
    const rpm = gate.limits.requestsPerMinute;
    if (rpm !== null && gate.tokens < rpm) return;
    gate.timer?.cancel();
    this.gates.delete(key);
  }

  private now(): number {
    return this.clock.now().getTime();
  }
}

interface GateWaiter {
  grant(): void;
}

interface Gate {
  limits: ProviderLimits;
  /** Calls at the vendor now. */
  active: number;
  waiters: GateWaiter[];
  /** Epoch ms before which nobody calls (the vendor's `retry-after`). */
  backOffUntil: number;
  /** Requests the minute's bucket holds now (fractional while refilling). */
  tokens: number;
  refilledAt: number;
  timer: Timer | undefined;
}
