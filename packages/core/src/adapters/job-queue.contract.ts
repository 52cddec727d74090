import { strict as assert } from 'node:assert';
import { type Doc, DuplicateIdError, WriteConflictError } from '../ports/database';
import type { Clock } from '../ports/clock';
import type { JobContext, JobQueue } from '../ports/job-queue';
import { ManualClock } from '../testing/manual-clock';

/**
 * A collection of the test bed's store, with a queryable text field `state`, that handlers write
 * through `context.complete` and `enqueue(…, { with })`, so the suite can see those writes land.
 */
export const CONTRACT_NOTES = 'job_contract_notes';

/** What a `JobQueue` adapter's contract run needs. */
export interface JobQueueTestBed {
  /**
   * A started queue. Queues of one test bed share their store, like servers sharing a database.
   * Defaults for the suite: a 50 ms poll interval and a 5 s lease.
   */
  /** `clock`, when given, is the one the queue keeps time on (else the system clock). */
  createQueue(options?: { leaseMs?: number; pollIntervalMs?: number; clock?: Clock }): Promise<JobQueue>;
  /** Cuts `queue` off from the store as if its process died: it renews no lease, records nothing, and the store sees it dead. */
  crash(queue: JobQueue): void;
  /** Cuts `queue` off from the store, which still sees it live (a stuck process): only its leases run out. */
  hang(queue: JobQueue): void;
  /** A document of `CONTRACT_NOTES` as stored now. */
  readNote(id: string): Promise<Doc | undefined>;
  /** Stops every queue and removes the store. */
  cleanup(): Promise<void>;
}

/**
 * The one contract every `JobQueue` adapter passes: each guarantee of `ports/job-queue.ts`, checked
 * through the port alone, with several instances sharing one store where it matters.
 */
export function describeJobQueueContract(name: string, createTestBed: () => Promise<JobQueueTestBed>): void {
  describe(`JobQueue contract: ${name}`, function () {
    this.timeout(30_000);
    let bed: JobQueueTestBed;
    beforeEach(async () => {
      bed = await createTestBed();
    });
    afterEach(async () => {
      await bed.cleanup();
    });

    it('runs an enqueued job once with its JSON payload, then the queue is empty', async () => {
      const queue = await bed.createQueue();
      const seen: { payload: unknown; context: JobContext }[] = [];
      queue.register('greet', async (payload, context) => {
        seen.push({ payload, context });
      });
      assert.equal(queue.running, true);
      const id = await queue.enqueue('greet', { name: 'Ada', at: new Date(0), nested: [1, { deep: true }] });
      await eventually(() => assert.equal(seen.length, 1));
      assert.deepEqual(seen[0]!.payload, { name: 'Ada', at: '1970-01-01T00:00:00.000Z', nested: [1, { deep: true }] });
      assert.equal(seen[0]!.context.jobId, id);
      assert.equal(seen[0]!.context.attempt, 1);
      assert.equal(seen[0]!.context.signal.aborted, false);
      // Depth 0: the job has ended in the store, so no further attempt can come.
      await eventually(async () => assert.equal(await queue.depth(), 0));
      assert.equal(seen.length, 1);
    });

    it('wakes a worker at once for a job enqueued in the same instance, without waiting for a poll', async () => {
      // On a clock that stands still no poll ever falls due: only the enqueue can wake the worker.
      const queue = await bed.createQueue({ pollIntervalMs: 10_000, clock: new ManualClock() });
      let ran = 0;
      queue.register('now', async () => {
        ran += 1;
      });
      // Let the start-up read of the store finish, so it cannot be what picks the job up.
      await settle(100);
      await queue.enqueue('now', null);
      await eventually(() => assert.equal(ran, 1), 1000);
    });

    it('runs every job exactly once when several instances share the store', async () => {
      const workers = await Promise.all([bed.createQueue(), bed.createQueue(), bed.createQueue()]);
      const producer = await bed.createQueue();
      const runs = new Map<string, number>();
      const byWorker = workers.map(() => 0);
      workers.forEach((queue, index) =>
        queue.register(
          'work',
          async (_payload, context) => {
            runs.set(context.jobId, (runs.get(context.jobId) ?? 0) + 1);
            byWorker[index]! += 1;
            await new Promise((resolve) => setTimeout(resolve, Math.random() * 3));
          },
          { concurrency: 4 },
        ),
      );
      const enqueued = await Promise.all(
        Array.from({ length: 240 }, (_, n) => [...workers, producer][n % 4]!.enqueue('work', { n })),
      );
      assert.equal(new Set(enqueued).size, 240);
      await eventually(() => assert.equal(runs.size, 240), 20_000);
      await eventually(async () => assert.equal(await producer.depth(), 0));
      assert.deepEqual([...runs.values()].filter((count) => count !== 1), [], 'no job ran twice');
      assert.deepEqual([...runs.keys()].sort(), [...enqueued].sort());
      assert.ok(byWorker.filter((count) => count > 0).length >= 2, `work was shared: ${byWorker.join(', ')}`);
    });

    it('retries a throwing job with doubling backoff, then succeeds', async () => {
      const clock = new ManualClock();
      const queue = await bed.createQueue({ clock });
      const attempts: { attempt: number; at: number }[] = [];
      queue.register('flaky', async (_payload, context) => {
        attempts.push({ attempt: context.attempt, at: clock.now().getTime() });
        if (context.attempt < 3) throw new Error(`attempt ${context.attempt} failed`);
      });
      await queue.enqueue('flaky', {}, { retry: { maxAttempts: 5, initialBackoffMs: 80, jitter: 0 } });
      await eventually(() => assert.equal(attempts.length, 1));
      await runNextDelayed(clock, () => attempts.length === 2);
      await runNextDelayed(clock, () => attempts.length === 3);
      await eventually(async () => assert.equal(await queue.depth(), 0));
      assert.deepEqual(attempts.map((entry) => entry.attempt), [1, 2, 3]);
      assert.deepEqual(gapsOf(attempts.map((entry) => entry.at)), [80, 160], 'the backoff doubles');
    });

    it('caps the backoff at maxBackoffMs and keeps jitter within its bounds', async () => {
      const clock = new ManualClock();
      const queue = await bed.createQueue({ clock });
      const times: number[] = [];
      queue.register('capped', async () => {
        times.push(clock.now().getTime());
        throw new Error('always');
      });
      await queue.enqueue('capped', {}, { retry: { maxAttempts: 4, initialBackoffMs: 60, maxBackoffMs: 100, jitter: 0.2 } });
      await eventually(() => assert.equal(times.length, 1));
      for (let attempt = 2; attempt <= 4; attempt += 1) await runNextDelayed(clock, () => times.length === attempt);
      const gaps = gapsOf(times);
      // Nominal delays 60, 100 (capped from 120), 100 (capped from 240); ±20 % jitter.
      assert.ok(gaps[0]! >= 48 && gaps[0]! <= 72, `first gap ${gaps[0]} ms within 60 ± 20 %`);
      for (const gap of gaps.slice(1)) assert.ok(gap >= 80 && gap <= 120, `gaps ${gaps.join(', ')}: capped at 100 ± 20 %`);
      await eventually(async () => assert.equal(await queue.depth(), 0));
      assert.equal(times.length, 4, 'no attempt past maxAttempts');
    });

    it('gives up after maxAttempts; a job without a retry policy gets one attempt', async () => {
      const queue = await bed.createQueue();
      const attempts = new Map<string, number[]>();
      queue.register('doomed', async (_payload, context) => {
        attempts.set(context.jobId, [...(attempts.get(context.jobId) ?? []), context.attempt]);
        throw new Error('nope');
      });
      const limited = await queue.enqueue('doomed', {}, { retry: { maxAttempts: 3, initialBackoffMs: 10, jitter: 0 } });
      const single = await queue.enqueue('doomed', {});
      await eventually(() => assert.deepEqual(attempts.get(limited), [1, 2, 3]));
      await eventually(async () => assert.equal(await queue.depth(), 0), 3000);
      assert.deepEqual(attempts.get(limited), [1, 2, 3]);
      assert.deepEqual(attempts.get(single), [1]);
    });

    it('offers a job again when the lease of a worker the store still sees live runs out', async () => {
      const doomed = await bed.createQueue({ leaseMs: 300 });
      let releaseDoomed = (): void => {};
      const started: number[] = [];
      doomed.register('work', async (_payload, context) => {
        started.push(context.attempt);
        await new Promise<void>((resolve) => (releaseDoomed = resolve));
      });
      const id = await doomed.enqueue('work', { important: true });
      await eventually(() => assert.deepEqual(started, [1]));
      bed.hang(doomed);

      const survivor = await bed.createQueue({ leaseMs: 300 });
      const recovered: JobContext[] = [];
      survivor.register('work', async (payload, context) => {
        assert.deepEqual(payload, { important: true });
        recovered.push(context);
      });
      await eventually(() => assert.equal(recovered.length, 1), 5000);
      assert.equal(recovered[0]!.jobId, id);
      assert.equal(recovered[0]!.attempt, 2);
      await eventually(async () => assert.equal(await survivor.depth(), 0));
      releaseDoomed();
    });

    it('takes a job back at once when its worker dies, long before the lease would run out', async () => {
      const doomed = await bed.createQueue({ leaseMs: 600_000 });
      const started: number[] = [];
      doomed.register('work', async (_payload, context) => {
        started.push(context.attempt);
        await new Promise<void>((resolve) => context.signal.addEventListener('abort', () => resolve()));
      });
      const id = await doomed.enqueue('work', { important: true });
      await eventually(() => assert.deepEqual(started, [1]));
      bed.crash(doomed);

      // A survivor that is already running notices on a poll; one starting now, at start.
      const survivors = [await bed.createQueue({ leaseMs: 600_000 }), await bed.createQueue({ leaseMs: 600_000 })];
      const recovered: JobContext[] = [];
      for (const survivor of survivors) {
        survivor.register('work', async (payload, context) => {
          assert.deepEqual(payload, { important: true });
          recovered.push(context);
        });
      }
      await eventually(() => assert.equal(recovered.length, 1), 10_000);
      assert.deepEqual([recovered[0]!.jobId, recovered[0]!.attempt], [id, 2]);
      await eventually(async () => assert.equal(await survivors[0]!.depth(), 0));
      assert.equal(recovered.length, 1);
    });

    it('never takes back a job of a live worker, also not an instance starting while it runs', async () => {
      const holder = await bed.createQueue({ leaseMs: 600_000 });
      let release = (): void => {};
      const gate = new Promise<void>((resolve) => (release = resolve));
      const ranOnHolder: number[] = [];
      holder.register('held', async (_payload, context) => {
        ranOnHolder.push(context.attempt);
        await gate;
      });
      await holder.enqueue('held', {});
      await eventually(() => assert.deepEqual(ranOnHolder, [1]));
      // Its start looks for jobs of dead workers (and its polls go on looking).
      const newcomer = await bed.createQueue({ leaseMs: 600_000 });
      const ranOnNewcomer: number[] = [];
      newcomer.register('held', async (_payload, context) => {
        ranOnNewcomer.push(context.attempt);
      });
      release();
      // A job taken back could no longer be ended by the holder's attempt: it would be gone only
      // after a second attempt, here or there.
      await eventually(async () => assert.equal(await holder.depth(), 0), 5000);
      assert.deepEqual([ranOnHolder, ranOnNewcomer], [[1], []]);
    });

    it('keeps a job whose worker is alive: the lease is renewed while the attempt runs', async () => {
      // The attempt outlasts its lease 2.5 times over. The lease is long enough that a loaded
      // machine's event-loop stalls (hundreds of ms on a busy CI runner) cannot skip every renewal.
      const first = await bed.createQueue({ leaseMs: 1000 });
      const second = await bed.createQueue({ leaseMs: 1000 });
      const runs: string[] = [];
      for (const [label, queue] of [['first', first], ['second', second]] as const) {
        queue.register('long', async () => {
          runs.push(label);
          await new Promise((resolve) => setTimeout(resolve, 2500));
        });
      }
      await first.enqueue('long', {});
      await eventually(async () => assert.equal(await first.depth(), 0), 10_000);
      assert.equal(runs.length, 1, `ran ${runs.join(', ')}`);
    });

    it('makes enqueue idempotent with a key, also across instances and at the same time', async () => {
      const left = await bed.createQueue();
      const right = await bed.createQueue();
      const runs: unknown[] = [];
      let unblock = (): void => {};
      const blocked = new Promise<void>((resolve) => (unblock = resolve));
      left.register('once', async (payload) => {
        runs.push(payload);
        await blocked;
      });
      const ids = await Promise.all([
        left.enqueue('once', 1, { key: 'order-7' }),
        right.enqueue('once', 2, { key: 'order-7' }),
        left.enqueue('once', 3, { key: 'order-7' }),
      ]);
      assert.equal(new Set(ids).size, 1);
      await eventually(() => assert.equal(runs.length, 1));
      assert.equal(await right.enqueue('once', 4, { key: 'order-7' }), ids[0], 'same id while it runs');
      assert.notEqual(await right.enqueue('other-kind', 5, { key: 'order-7' }), ids[0], 'keys are scoped by kind');
      unblock();
      // Depth 1: the keyed job has ended, and only the other kind's job (no handler) still waits.
      await eventually(async () => assert.equal(await left.depth(), 1));
      assert.equal(runs.length, 1);
    });

    it('runs a key again once the job holding it has finished', async () => {
      const queue = await bed.createQueue();
      const runs: unknown[] = [];
      queue.register('report', async (payload) => {
        runs.push(payload);
      });
      const first = await queue.enqueue('report', 'a', { key: 'daily' });
      await eventually(async () => assert.equal(await queue.depth(), 0));
      const second = await queue.enqueue('report', 'b', { key: 'daily' });
      await eventually(() => assert.deepEqual(runs, ['a', 'b']));
      assert.equal(second, first, 'the key names the job');
    });

    it('holds a job until runAt', async () => {
      const clock = new ManualClock();
      const queue = await bed.createQueue({ clock });
      const ran: number[] = [];
      queue.register('later', async () => {
        ran.push(clock.now().getTime());
      });
      const runAt = new Date(clock.now().getTime() + 300);
      await queue.enqueue('later', {}, { runAt });
      assert.equal(await queue.depth(), 1);
      await runNextDelayed(clock, () => ran.length === 1);
      assert.deepEqual(ran, [runAt.getTime()], 'ran when runAt came, not before');
    });

    it('limits attempts running at once per kind, without holding back other kinds', async () => {
      const queue = await bed.createQueue();
      let running = 0;
      let peak = 0;
      let otherRanDuringSlow = false;
      queue.register(
        'slow',
        async () => {
          running += 1;
          peak = Math.max(peak, running);
          await new Promise((resolve) => setTimeout(resolve, 60));
          running -= 1;
        },
        { concurrency: 2 },
      );
      queue.register('quick', async () => {
        otherRanDuringSlow = running > 0;
      });
      await Promise.all(Array.from({ length: 6 }, () => queue.enqueue('slow', {})));
      await queue.enqueue('quick', {});
      await eventually(async () => assert.equal(await queue.depth(), 0), 5000);
      assert.equal(peak, 2);
      assert.equal(otherRanDuringSlow, true);
    });

    it('keeps jobs of a kind without a handler waiting, and runs them once one registers', async () => {
      const queue = await bed.createQueue();
      await queue.enqueue('unclaimed', { n: 1 });
      await queue.enqueue('unclaimed', { n: 2 });
      assert.equal(await queue.depth(), 2);
      const other = await bed.createQueue();
      const seen: unknown[] = [];
      other.register('unclaimed', async (payload) => {
        seen.push(payload);
      });
      await eventually(() => assert.equal(seen.length, 2), 3000);
      assert.deepEqual(seen.map((payload) => (payload as { n: number }).n).sort(), [1, 2]);
    });

    it('cancel aborts the running attempt and drops the job; a cancelled waiting job never runs', async () => {
      const clock = new ManualClock();
      const queue = await bed.createQueue({ clock });
      const attempts: number[] = [];
      let abortReason: unknown;
      queue.register('cancellable', async (_payload, context) => {
        attempts.push(context.attempt);
        await new Promise<void>((resolve) => context.signal.addEventListener('abort', () => resolve()));
        abortReason = context.signal.reason;
        throw new Error('aborted');
      });
      const running = await queue.enqueue('cancellable', {}, { retry: { maxAttempts: 5, initialBackoffMs: 10 } });
      await eventually(() => assert.equal(attempts.length, 1));
      await queue.cancel(running);
      await eventually(() => assert.ok(abortReason !== undefined, 'the attempt was aborted'));

      const waiting = await queue.enqueue('cancellable', {}, { runAt: new Date(clock.now().getTime() + 150) });
      await queue.cancel(waiting);
      await queue.cancel('no-such-job');
      // Depth 0: both jobs are gone from the store, so neither can run again, whenever it was due.
      await eventually(async () => assert.equal(await queue.depth(), 0));
      await clock.advance(1000);
      assert.deepEqual(attempts, [1], 'neither retried nor started');
    });

    it('cancel from another instance aborts the attempt where it runs', async () => {
      const worker = await bed.createQueue({ leaseMs: 150 });
      const other = await bed.createQueue({ leaseMs: 150 });
      let aborted = false;
      let started = false;
      worker.register('remote', async (_payload, context) => {
        started = true;
        await new Promise<void>((resolve) => context.signal.addEventListener('abort', () => resolve()));
        aborted = true;
      });
      const id = await worker.enqueue('remote', {});
      await eventually(() => assert.equal(started, true));
      await other.cancel(id);
      await eventually(() => assert.equal(aborted, true), 3000);
      assert.equal(await other.depth(), 0);
    });

    it('stop waits for running attempts to finish and takes no new jobs until started again', async () => {
      const clock = new ManualClock();
      const queue = await bed.createQueue({ clock });
      const started: unknown[] = [];
      const finished: unknown[] = [];
      let release = (): void => {};
      const gate = new Promise<void>((resolve) => (release = resolve));
      queue.register('steady', async (payload) => {
        started.push(payload);
        await gate;
        finished.push(payload);
      });
      await queue.enqueue('steady', 'in flight');
      await eventually(() => assert.deepEqual(started, ['in flight']));
      const stopping = queue.stop(5000);
      // Stop waits on its grace period's timer for the attempt; time never reaches it here.
      await clock.timerSet((timer) => timer.delayMs === 5000);
      release();
      await stopping;
      assert.deepEqual(finished, ['in flight'], 'stop returned once the attempt had finished');
      assert.equal(queue.running, false);
      assert.deepEqual(clock.pending, [], 'a stopped queue keeps no timer that could wake it');

      await queue.enqueue('steady', 'while stopped');
      assert.equal(await queue.depth(), 1);
      await queue.start();
      await eventually(() => assert.deepEqual(finished, ['in flight', 'while stopped']), 3000);
      assert.deepEqual(started, ['in flight', 'while stopped'], 'the job enqueued while stopped ran once, after the start');
    });

    it('stop aborts attempts still running after the grace period; the job is offered again', async () => {
      const clock = new ManualClock();
      const queue = await bed.createQueue({ clock });
      const attempts: { attempt: number; abortedAfter?: number }[] = [];
      queue.register('slow-to-stop', async (_payload, context) => {
        const entry: { attempt: number; abortedAfter?: number } = { attempt: context.attempt };
        attempts.push(entry);
        if (context.attempt > 1) return;
        const began = clock.now().getTime();
        await new Promise<void>((resolve) => context.signal.addEventListener('abort', () => resolve()));
        entry.abortedAfter = clock.now().getTime() - began;
        throw context.signal.reason;
      });
      await queue.enqueue('slow-to-stop', {});
      await eventually(() => assert.equal(attempts.length, 1));
      const stopping = queue.stop(100);
      await clock.timerSet((timer) => timer.delayMs === 100);
      assert.equal(attempts[0]!.abortedAfter, undefined, 'not aborted before the grace period');
      await clock.advanceUntil(stopping, 100);
      assert.equal(attempts[0]!.abortedAfter, 100, 'aborted when the grace period ended');
      assert.equal(await queue.depth(), 1, 'the job is kept');
      await queue.start();
      await eventually(() => assert.deepEqual(attempts.map((entry) => entry.attempt), [1, 2]), 3000);
      await eventually(async () => assert.equal(await queue.depth(), 0));
    });

    it('complete(ops) writes the ops and ends the job in one write; the job is not run again', async () => {
      const queue = await bed.createQueue();
      const ran: number[] = [];
      queue.register('note', async (payload: { id: string }, context) => {
        ran.push(context.attempt);
        await context.complete([{ op: 'insert', collection: CONTRACT_NOTES, doc: { id: payload.id, state: 'done' } }]);
        await assert.rejects(context.complete([]), /already finished/);
      });
      await queue.enqueue('note', { id: 'n1' });
      await eventually(async () => assert.deepEqual(await bed.readNote('n1'), { id: 'n1', state: 'done' }));
      assert.equal(await queue.depth(), 0);
      assert.deepEqual(ran, [1]);
    });

    it('complete(ops) whose ops conflict writes nothing and leaves the attempt to end as the handler does', async () => {
      const queue = await bed.createQueue();
      const outcomes: unknown[] = [];
      queue.register(
        'conflicting',
        async (_payload, context) => {
          const attempt = context.complete([{ op: 'replace', collection: CONTRACT_NOTES, doc: { id: 'missing', state: 'x' }, expect: { state: 'y' } }]);
          outcomes.push(await attempt.then(() => 'written', (error: unknown) => error));
          if (context.attempt === 1) throw new Error('try again');
          await context.complete([{ op: 'insert', collection: CONTRACT_NOTES, doc: { id: 'second', state: 'done' } }]);
        },
        { concurrency: 1 },
      );
      await queue.enqueue('conflicting', null, { retry: { maxAttempts: 2, initialBackoffMs: 10 } });
      await eventually(async () => assert.ok(await bed.readNote('second'), 'the second attempt wrote its note'));
      assert.equal(outcomes.length, 2);
      for (const outcome of outcomes) assert.ok(outcome instanceof WriteConflictError && outcome.collection === CONTRACT_NOTES, String(outcome));
      assert.equal(await bed.readNote('missing'), undefined);
      await eventually(async () => assert.equal(await queue.depth(), 0));
    });

    it('enqueue with ops stores them with the job, both or neither; a held key writes them alone', async () => {
      const queue = await bed.createQueue();
      let release = (): void => {};
      const gate = new Promise<void>((resolve) => (release = resolve));
      const seen: string[] = [];
      queue.register('with', async (payload: string) => {
        seen.push(payload);
        await gate;
      });
      const note = (id: string) => ({ op: 'insert' as const, collection: CONTRACT_NOTES, doc: { id, state: 'queued' } });
      const first = await queue.enqueue('with', 'a', { key: 'k', with: [note('a')] });
      assert.deepEqual(await bed.readNote('a'), { id: 'a', state: 'queued' });
      assert.equal(await queue.enqueue('with', 'b', { key: 'k', with: [note('b')] }), first);
      assert.ok(await bed.readNote('b'));
      await assert.rejects(queue.enqueue('with', 'c', { with: [note('a')] }), DuplicateIdError);
      release();
      await eventually(async () => assert.equal(await queue.depth(), 0));
      assert.deepEqual(seen, ['a']);
    });

    it('enqueue with ops from a function calls it once, before the write, saying whether this instance claimed the job', async () => {
      const queue = await bed.createQueue();
      const handled: { payload: string; note: Doc | undefined }[] = [];
      queue.register('claim', async (payload: string) => {
        handled.push({ payload, note: await bed.readNote(payload) });
      });
      const note = (id: string, state: string) => ({ op: 'insert' as const, collection: CONTRACT_NOTES, doc: { id, state } });
      const calls: boolean[] = [];
      const enqueued = queue.enqueue('claim', 'a', { with: (claimedHere) => (calls.push(claimedHere), [note('a', claimedHere ? 'started' : 'queued')]) });
      assert.equal(calls.length, 1, 'called synchronously, before the write');
      await enqueued;
      await eventually(() => assert.equal(handled.length, 1));
      // Whatever the queue answered, the handler sees the ops that went with the job.
      assert.deepEqual(handled[0], { payload: 'a', note: { id: 'a', state: calls[0] ? 'started' : 'queued' } });
      // A kind without a handler here is never claimed at enqueue.
      await queue.enqueue('unhandled', 'b', { with: (claimedHere) => (calls.push(claimedHere), [note('b', 'queued')]) });
      assert.deepEqual(calls.slice(1), [false]);
      assert.deepEqual(await bed.readNote('b'), { id: 'b', state: 'queued' });
    });

    it('counts waiting and running jobs in depth', async () => {
      const queue = await bed.createQueue();
      let release = (): void => {};
      const gate = new Promise<void>((resolve) => (release = resolve));
      queue.register('gated', () => gate, { concurrency: 1 });
      assert.equal(await queue.depth(), 0);
      await Promise.all([queue.enqueue('gated', 1), queue.enqueue('gated', 2), queue.enqueue('gated', 3)]);
      assert.equal(await queue.depth(), 3);
      release();
      await eventually(async () => assert.equal(await queue.depth(), 0));
    });
  });
}

/** Retries an assertion until it holds or the time is up. */
async function eventually(check: () => void | Promise<void>, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

function settle(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Moves `clock` exactly to the due time of the next delayed job's timer (a retry's backoff, a
 * `runAt`), which the queue sets the moment it learns of the job, then waits until `happened`:
 * the attempt runs at that instant of the clock, so a test can assert exact delays.
 */
async function runNextDelayed(clock: ManualClock, happened: () => boolean): Promise<void> {
  const timer = await clock.timerSet();
  await clock.advance(timer.dueMs - clock.now().getTime());
  await eventually(() => assert.ok(happened(), 'the delayed attempt ran when its timer fired'));
}

function gapsOf(times: number[]): number[] {
  return times.slice(1).map((at, index) => at - times[index]!);
}
