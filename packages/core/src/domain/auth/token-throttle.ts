import { inject, injectable } from 'inversify';
import { Clock } from '../../ports/clock';

/**
 * Brute-force limits on client authentication at `POST /auth/token` (ARCHITECTURE.md, "Limits
 * and credentials outside accounts").
 *
 * Policy. Failed authentications (unknown client or wrong secret) are counted on two keys:
 * - the **client id from one address** (`pair`): 5 failures are free, and each one after that
 *   blocks that client id from that address for 1 s, 2 s, 4 s, … capped at 60 s;
 * - the **address**, whatever client ids it tries (`address`): 20 failures are free, then the same
 *   growing back-off for every client id from that address.
 * While a key is blocked, requests under it answer 429 with `Retry-After` (≤ 60 s) without the
 * secret being checked: they are not guesses, and they do not count as failures, so hammering never
 * stretches a block past 60 s; the right secret works as soon as it has passed. A success clears its
 * pair's count. Counts are forgotten after 15 minutes without a failure. Attempts being checked
 * count as failures until they end, and one that would pass the free failures meanwhile waits for
 * them: concurrent requests get no more checks than sequential ones, and a burst of right secrets
 * (a fleet of workers starting at once behind one address) is served, not refused.
 *
 * No key spans addresses: failures from one address never block the client id from another, so an
 * attacker cannot lock a real client out from elsewhere. (A client-wide lock would let anyone with
 * the client id deny it.) Guessing from many addresses is bounded per address, and generated secrets
 * (32 random bytes) make it hopeless; bootstrap secrets should be as long.
 *
 * IPv6 addresses count per /64 (one host usually holds a whole /64); IPv4-mapped IPv6 counts as
 * its IPv4 address. A request without an address (an embedding host that does not pass one) counts
 * under one shared unknown address. State lives in this process: each instance limits on its own.
 */
export const THROTTLE_POLICY = {
  freeFailuresPerClientAndAddress: 5,
  freeFailuresPerAddress: 20,
  firstBlockMs: 1000,
  maxBlockMs: 60_000,
  forgetAfterMs: 15 * 60_000,
  /** Keys remembered per kind; the oldest are dropped past it, so a flood of addresses stays bounded. */
  maxKeys: 100_000,
  /** Attempts waiting for those in flight under one key; more are told to retry in 1 s. */
  maxWaitingPerKey: 64,
} as const;

interface InFlight {
  attempts: number;
  waiters: Array<() => void>;
}

interface Counter {
  failures: number;
  lastFailureAt: number;
  blockedUntil: number;
}

export interface ThrottleKeys {
  clientId: string;
  remoteAddress: string | undefined;
}

export interface FailureRecord {
  /** Failures counted for this client id from this address. */
  failures: number;
  /** Failures counted for this address over every client id. */
  addressFailures: number;
  /** Seconds the next attempt under these keys has to wait (0: none). */
  retryAfterSeconds: number;
}

/** One authentication attempt that `begin` let through: say how it ended. */
export interface ThrottledAttempt {
  /** The secret was right: the client id from this address starts afresh. */
  succeeded(): void;
  /** The client was unknown or the secret wrong: the counts after this failure. */
  failed(): FailureRecord;
}

@injectable()
export class TokenThrottle {
  private readonly pairs = new Map<string, Counter>();
  private readonly addresses = new Map<string, Counter>();
  /** Attempts being checked now, per pair and per address key. */
  private readonly inFlight = new Map<string, InFlight>();

  constructor(@inject(Clock) private readonly clock: Clock) {}

  /**
   * Seconds to wait when these keys are blocked (nothing is counted then); otherwise the attempt,
   * once it may be checked. Attempts being checked count against the free failures as if they had
   * failed, so concurrent guesses cannot all slip in before the first of them is checked; an
   * attempt that would pass that budget waits for those in flight to end (a burst of right secrets
   * all succeed, a burst of guesses gets as many checks as one guess after another would).
   */
  async begin(keys: ThrottleKeys): Promise<{ retryAfterSeconds: number } | ThrottledAttempt> {
    const { pair, address } = throttleKeys(keys);
    const pairKey = `pair ${pair}`;
    const addressKey = `address ${address}`;
    for (;;) {
      const now = this.clock.now().getTime();
      const pairCounter = this.current(this.pairs, pair, now);
      const addressCounter = this.current(this.addresses, address, now);
      const blockedUntil = Math.max(pairCounter?.blockedUntil ?? 0, addressCounter?.blockedUntil ?? 0);
      if (blockedUntil > now) return { retryAfterSeconds: secondsUntil(blockedUntil, now) };
      const pairInFlight = this.inFlight.get(pairKey);
      const addressInFlight = this.inFlight.get(addressKey);
      const pairBudgetSpent =
        (pairCounter?.failures ?? 0) + (pairInFlight?.attempts ?? 0) >= THROTTLE_POLICY.freeFailuresPerClientAndAddress;
      const addressBudgetSpent =
        (addressCounter?.failures ?? 0) + (addressInFlight?.attempts ?? 0) >= THROTTLE_POLICY.freeFailuresPerAddress;
      const busy = pairBudgetSpent && pairInFlight ? pairInFlight : addressBudgetSpent && addressInFlight ? addressInFlight : undefined;
      if (!busy) break;
      if (busy.waiters.length >= THROTTLE_POLICY.maxWaitingPerKey) return { retryAfterSeconds: 1 };
      await new Promise<void>((resolve) => busy.waiters.push(resolve));
    }
    this.enter(pairKey);
    this.enter(addressKey);
    let ended = false;
    const end = () => {
      if (ended) throw new Error('a throttled attempt ends once');
      ended = true;
      this.leave(pairKey);
      this.leave(addressKey);
    };
    return {
      succeeded: () => {
        end();
        this.pairs.delete(pair);
      },
      failed: () => {
        end();
        const now = this.clock.now().getTime();
        const pairCount = this.fail(this.pairs, pair, now, THROTTLE_POLICY.freeFailuresPerClientAndAddress);
        const addressCount = this.fail(this.addresses, address, now, THROTTLE_POLICY.freeFailuresPerAddress);
        return {
          failures: pairCount.failures,
          addressFailures: addressCount.failures,
          retryAfterSeconds: secondsUntil(Math.max(pairCount.blockedUntil, addressCount.blockedUntil), now),
        };
      },
    };
  }

  private enter(key: string): void {
    const entry = this.inFlight.get(key);
    if (entry) entry.attempts += 1;
    else this.inFlight.set(key, { attempts: 1, waiters: [] });
  }

  /** An attempt under `key` ended: every waiter looks again (they are few: `maxWaitingPerKey`). */
  private leave(key: string): void {
    const entry = this.inFlight.get(key)!;
    entry.attempts -= 1;
    const waiters = entry.waiters.splice(0);
    if (entry.attempts === 0) this.inFlight.delete(key);
    for (const wake of waiters) wake();
  }

  private current(counters: Map<string, Counter>, key: string, now: number): Counter | undefined {
    const counter = counters.get(key);
    if (counter && now - counter.lastFailureAt >= THROTTLE_POLICY.forgetAfterMs && now >= counter.blockedUntil) {
      counters.delete(key);
      return undefined;
    }
    return counter;
  }

  /** One more failure on `key`; past `free` of them, a block growing from 1 s to 60 s. */
  private fail(counters: Map<string, Counter>, key: string, now: number, free: number): Counter {
    const counter = this.current(counters, key, now) ?? { failures: 0, lastFailureAt: now, blockedUntil: 0 };
    counter.failures += 1;
    counter.lastFailureAt = now;
    const over = counter.failures - free;
    if (over > 0) {
      const block = Math.min(THROTTLE_POLICY.maxBlockMs, THROTTLE_POLICY.firstBlockMs * 2 ** Math.min(over - 1, 30));
      counter.blockedUntil = Math.max(counter.blockedUntil, now + block);
    }
    // Re-inserted so the map's order is least recently failed first: the oldest go when it is full.
    counters.delete(key);
    counters.set(key, counter);
    if (counters.size > THROTTLE_POLICY.maxKeys) counters.delete(counters.keys().next().value!);
    return counter;
  }
}

function secondsUntil(until: number, now: number): number {
  return until > now ? Math.ceil((until - now) / 1000) : 0;
}

function throttleKeys({ clientId, remoteAddress }: ThrottleKeys): { pair: string; address: string } {
  const address = addressKey(remoteAddress);
  // Client ids are at most 128 characters; a longer one names no client, and must not grow the map's keys.
  return { address, pair: `${address} ${clientId.slice(0, 130)}` };
}

/** The address a limit counts under: IPv4 as is, IPv4-mapped IPv6 as IPv4, other IPv6 by its /64. */
export function addressKey(remoteAddress: string | undefined): string {
  const address = remoteAddress?.trim().toLowerCase().replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (!address) return 'unknown';
  const mapped = /^(?:::|(?:0{1,4}:){5})ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(address);
  if (mapped) return mapped[1]!;
  if (!address.includes(':')) return address;
  const groups = expandIpv6(address);
  return groups ? `${groups.slice(0, 4).join(':')}::/64` : address.slice(0, 64);
}

/** The eight 16-bit groups of an IPv6 address, each without leading zeros; undefined if it is not one. */
function expandIpv6(address: string): string[] | undefined {
  const halves = address.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  // An embedded IPv4 tail counts as two groups.
  const groupCount = (parts: string[]) => parts.reduce((sum, part) => sum + (part.includes('.') ? 2 : 1), 0);
  const missing = 8 - groupCount(head) - groupCount(tail);
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail];
  if (!groups.slice(0, 4).every((group) => /^[0-9a-f]{1,4}$/.test(group))) return undefined;
  return groups.map((group) => (group.includes('.') ? group : group.replace(/^0+(?=.)/, '')));
}
