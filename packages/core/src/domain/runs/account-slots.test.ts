import assert from 'node:assert/strict';
import { AccountSlots } from './account-slots';

describe('AccountSlots', () => {
  const never = new AbortController().signal;

  it('gives each account its own slots', async () => {
    const slots = new AccountSlots(2);
    assert.equal(await slots.acquire('a', 'a1', never), 'acquired');
    assert.equal(await slots.acquire('a', 'a2', never), 'acquired');
    assert.equal(await slots.acquire('b', 'b1', never), 'acquired');
  });

  it('lets runs wait in line up to the per-account bound, then answers full', async () => {
    const slots = new AccountSlots(1);
    assert.equal(await slots.acquire('a', 'r1', never), 'acquired');
    let secondGotIn = false;
    const second = slots.acquire('a', 'r2', never).then((outcome) => {
      secondGotIn = true;
      return outcome;
    });
    assert.equal(await slots.acquire('a', 'r3', never), 'full');
    await Promise.resolve();
    assert.equal(secondGotIn, false);
    assert.equal(slots.release('a'), undefined);
    assert.equal(await second, 'acquired');
  });

  it('wakes parked runs in order with a slot kept for each, and parks newcomers behind them', async () => {
    const slots = new AccountSlots(1);
    await slots.acquire('a', 'r1', never);
    const inLine = slots.acquire('a', 'r2', never);
    assert.equal(await slots.acquire('a', 'r3', never), 'full');
    assert.equal(slots.park('a', 'r3'), undefined);
    assert.equal(await slots.acquire('a', 'r4', never), 'full');
    assert.equal(slots.park('a', 'r4'), undefined);

    assert.equal(slots.release('a'), undefined);
    assert.equal(await inLine, 'acquired');
    // The line is empty now, yet a newcomer must not pass the parked runs.
    assert.equal(await slots.acquire('a', 'r5', never), 'full');
    assert.equal(slots.park('a', 'r5'), undefined);
    assert.equal(slots.release('a'), 'r3');
    // The slot is r3's: nobody else gets it, r3 does.
    assert.equal(await slots.acquire('a', 'r6', never), 'full');
    assert.equal(await slots.acquire('a', 'r3', never), 'acquired');
    assert.equal(slots.release('a'), 'r4');
    // A woken run that will not execute passes its slot on.
    assert.equal(slots.forfeit('a', 'r4'), 'r5');
    assert.equal(slots.forfeit('a', 'r5'), undefined);
    assert.equal(await slots.acquire('a', 'r7', never), 'acquired');
  });

  it('wakes a run at once when a slot came free while it was being parked', async () => {
    const slots = new AccountSlots(1);
    await slots.acquire('a', 'r1', never);
    const leaving = new AbortController();
    const inLine = slots.acquire('a', 'r2', leaving.signal);
    assert.equal(await slots.acquire('a', 'r3', never), 'full');
    // While r3 gives its job up, r2 leaves the line and r1 finishes.
    leaving.abort(new Error('cancelled'));
    await assert.rejects(inLine);
    assert.equal(slots.release('a'), undefined);
    assert.equal(slots.park('a', 'r3'), 'r3');
    assert.equal(await slots.acquire('a', 'r3', never), 'acquired');
  });

  it('drops a waiter whose signal aborts and rejects with its reason', async () => {
    const slots = new AccountSlots(1);
    await slots.acquire('a', 'r1', never);
    const cancel = new AbortController();
    const waiting = slots.acquire('a', 'r2', cancel.signal);
    cancel.abort(new Error('cancelled'));
    await assert.rejects(waiting, /cancelled/);
    assert.equal(slots.release('a'), undefined);
    assert.equal(await slots.acquire('a', 'r3', never), 'acquired');
  });
});
