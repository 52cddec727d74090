import assert from 'node:assert/strict';
import { RunScheduler } from './run-scheduler';

const never = new AbortController().signal;

/** One account's runs only: a per-account cap of `perAccount`, a server cap that never binds. */
function perAccount(limit: number): RunScheduler {
  return new RunScheduler({ maxInFlight: 1000, maxInFlightPerAccount: limit });
}

describe('RunScheduler', () => {
  describe('one account', () => {
    it('gives each account its own slots', async () => {
      const slots = perAccount(2);
      assert.equal(await slots.acquire('a', 'a1', never), 'acquired');
      assert.equal(await slots.acquire('a', 'a2', never), 'acquired');
      assert.equal(await slots.acquire('b', 'b1', never), 'acquired');
      assert.equal(slots.running, 3);
    });

    it('tryAcquire takes a free slot at once, and takes nothing while the account is full or has runs waiting', async () => {
      const slots = perAccount(1);
      assert.equal(slots.tryAcquire('a'), true);
      assert.equal(slots.tryAcquire('a'), false);
      assert.equal(slots.running, 1);
      const waiting = slots.acquire('a', 'r2', never);
      assert.deepEqual(slots.release('a'), []);
      // The slot went to the run in line, not to a newcomer.
      assert.equal(slots.tryAcquire('a'), false);
      assert.equal(await waiting, 'acquired');
      assert.deepEqual(slots.release('a'), []);
      assert.equal(slots.tryAcquire('a'), true);
    });

    it('lets runs wait in line up to the per-account bound, then answers full', async () => {
      const slots = perAccount(1);
      assert.equal(await slots.acquire('a', 'r1', never), 'acquired');
      let secondGotIn = false;
      const second = slots.acquire('a', 'r2', never).then((outcome) => {
        secondGotIn = true;
        return outcome;
      });
      assert.equal(await slots.acquire('a', 'r3', never), 'full');
      await Promise.resolve();
      assert.equal(secondGotIn, false);
      assert.deepEqual(slots.release('a'), []);
      assert.equal(await second, 'acquired');
    });

    it('wakes parked runs in order with a slot kept for each, and parks newcomers behind them', async () => {
      const slots = perAccount(1);
      await slots.acquire('a', 'r1', never);
      const inLine = slots.acquire('a', 'r2', never);
      assert.equal(await slots.acquire('a', 'r3', never), 'full');
      assert.deepEqual(slots.park('a', 'r3'), []);
      assert.equal(await slots.acquire('a', 'r4', never), 'full');
      assert.deepEqual(slots.park('a', 'r4'), []);

      assert.deepEqual(slots.release('a'), []);
      assert.equal(await inLine, 'acquired');
      // The line is empty now, yet a newcomer must not pass the parked runs.
      assert.equal(await slots.acquire('a', 'r5', never), 'full');
      assert.deepEqual(slots.park('a', 'r5'), []);
      assert.deepEqual(slots.release('a'), [{ accountId: 'a', runId: 'r3' }]);
      // The slot is r3's: nobody else gets it, r3 does.
      assert.equal(await slots.acquire('a', 'r6', never), 'full');
      assert.equal(await slots.acquire('a', 'r3', never), 'acquired');
      assert.deepEqual(slots.release('a'), [{ accountId: 'a', runId: 'r4' }]);
      // A woken run that will not execute passes its slot on.
      assert.deepEqual(slots.forfeit('a', 'r4'), [{ accountId: 'a', runId: 'r5' }]);
      assert.deepEqual(slots.forfeit('a', 'r5'), []);
      assert.equal(await slots.acquire('a', 'r7', never), 'acquired');
    });

    it('wakes a run at once when a slot came free while it was being parked', async () => {
      const slots = perAccount(1);
      await slots.acquire('a', 'r1', never);
      const leaving = new AbortController();
      const inLine = slots.acquire('a', 'r2', leaving.signal);
      assert.equal(await slots.acquire('a', 'r3', never), 'full');
      // While r3 gives its job up, r2 leaves the line and r1 finishes.
      leaving.abort(new Error('cancelled'));
      await assert.rejects(inLine);
      assert.deepEqual(slots.release('a'), []);
      assert.deepEqual(slots.park('a', 'r3'), [{ accountId: 'a', runId: 'r3' }]);
      assert.equal(await slots.acquire('a', 'r3', never), 'acquired');
    });

    it('drops a waiter whose signal aborts and rejects with its reason', async () => {
      const slots = perAccount(1);
      await slots.acquire('a', 'r1', never);
      const cancel = new AbortController();
      const waiting = slots.acquire('a', 'r2', cancel.signal);
      cancel.abort(new Error('cancelled'));
      await assert.rejects(waiting, /cancelled/);
      assert.deepEqual(slots.release('a'), []);
      assert.equal(await slots.acquire('a', 'r3', never), 'acquired');
    });
  });

  describe('between accounts', () => {
    /** Records the order in which waiting runs get their slots. */
    function started(slots: RunScheduler, order: string[], accountId: string, runId: string): Promise<unknown> {
      return slots.acquire(accountId, runId, new AbortController().signal).then((outcome) => {
        if (outcome === 'acquired') order.push(runId);
        return outcome;
      });
    }

    it('gives a freed slot to another account waiting, not to the account with a long line', async () => {
      const slots = new RunScheduler({ maxInFlight: 2, maxInFlightPerAccount: 2, maxWaitingPerAccount: 10_000 });
      const order: string[] = [];
      await started(slots, order, 'a', 'a0');
      await started(slots, order, 'a', 'a1');
      const waiting = Array.from({ length: 50 }, (_, index) => started(slots, order, 'a', `a${index + 2}`));
      const single = started(slots, order, 'b', 'b0');
      await Promise.resolve();
      assert.deepEqual(order, ['a0', 'a1']);

      slots.release('a');
      await single;
      // b's only run starts with the first freed slot, ahead of the 50 of a that came before it.
      assert.deepEqual(order, ['a0', 'a1', 'b0']);
      for (let index = 0; index < 50; index++) slots.release('a');
      slots.release('b');
      await Promise.all(waiting);
      assert.deepEqual(order.slice(3), Array.from({ length: 50 }, (_, index) => `a${index + 2}`));
    });

    it('serves the accounts with waiting runs in turn (round robin)', async () => {
      const slots = new RunScheduler({ maxInFlight: 1, maxInFlightPerAccount: 1, maxWaitingPerAccount: 100 });
      const order: string[] = [];
      await started(slots, order, 'a', 'a0');
      const all = [
        ...['a1', 'a2', 'a3'].map((id) => started(slots, order, 'a', id)),
        ...['b1', 'b2'].map((id) => started(slots, order, 'b', id)),
        started(slots, order, 'c', 'c1'),
      ];
      const owners = ['a', 'a', 'b', 'c', 'a', 'b', 'a'];
      for (const owner of owners) {
        slots.release(owner);
        await Promise.resolve();
      }
      await Promise.all(all);
      assert.deepEqual(order, ['a0', 'a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
    });

    it('lets another account start at once while one account is at its own cap', async () => {
      const slots = new RunScheduler({ maxInFlight: 10, maxInFlightPerAccount: 2 });
      await slots.acquire('a', 'a0', never);
      await slots.acquire('a', 'a1', never);
      const inLine = slots.acquire('a', 'a2', never);
      assert.equal(await slots.acquire('b', 'b0', never), 'acquired');
      slots.release('b');
      slots.release('a');
      assert.equal(await inLine, 'acquired');
    });

    it('wakes another account’s parked run in its turn', async () => {
      const slots = new RunScheduler({ maxInFlight: 1, maxInFlightPerAccount: 1, maxWaitingPerAccount: 1 });
      await slots.acquire('a', 'a0', never);
      const aLine = slots.acquire('a', 'a1', never);
      const bLine = slots.acquire('b', 'b0', never);
      assert.equal(await slots.acquire('b', 'b1', never), 'full');
      assert.deepEqual(slots.park('b', 'b1'), []);
      assert.deepEqual(slots.release('a'), []);
      assert.equal(await aLine, 'acquired');
      assert.deepEqual(slots.release('a'), []);
      assert.equal(await bLine, 'acquired');
      // b's line is empty: its parked run is next; a has nobody waiting.
      assert.deepEqual(slots.release('b'), [{ accountId: 'b', runId: 'b1' }]);
      assert.equal(await slots.acquire('b', 'b1', never), 'acquired');
      assert.equal(slots.running, 1);
    });
  });
});
