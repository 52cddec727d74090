import { performance } from 'node:perf_hooks';
import { eventBusMigrations } from '../packages/core/src/adapters/database-event-bus';
import { SystemClock } from '../packages/core/src/adapters/node/system-clock';
import type { PostgresDatabase } from '../packages/core/src/adapters/postgres/postgres-database';
import { PostgresEventBus } from '../packages/core/src/adapters/postgres/postgres-event-bus';
import { createTestSchema } from '../packages/core/test-support/postgres-test-store';
import { type BenchResult, benchResult } from './bench-result';
import { median, percentile } from './child-server';

/**
 * Cross-instance event delivery on PostgreSQL (`PostgresEventBus`): instance A publishes, a
 * subscriber on instance B (its own connection pool and listening session on the same schema)
 * receives. PUBLISHERS concurrent publishers on A each publish EVENTS_PER_PUBLISHER events one after
 * another, on TOPICS topics (a tenth of them 10 KB, past NOTIFY's payload: B reads those from the
 * table). The figure: p99 of the time from the publish resolving on A (the event stored) to B's
 * subscriber receiving it (0 when it came first), as workspace-events.bench.ts measures from a
 * write's answer; the baseline is the p99 of the write itself on A (`publish` called → resolved).
 * Both instances run in this process, so B's wake-ups share its event loop with A's publishing.
 * Median of BENCH_ROUNDS rounds. Goal: p99 ≤ 50 ms.
 */

const PUBLISHERS = Number(process.env.BENCH_BUS_PUBLISHERS ?? 8);
const EVENTS_PER_PUBLISHER = Number(process.env.BENCH_BUS_EVENTS_PER_PUBLISHER ?? 150);
const TOPICS = 4;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SMALL = 'x'.repeat(200);
const LARGE = 'y'.repeat(10_000);

interface Instance {
  bus: PostgresEventBus;
  database: PostgresDatabase;
}

export async function run(): Promise<BenchResult[]> {
  const schema = createTestSchema();
  const open = async (): Promise<Instance> => {
    const database = await schema.open();
    await database.migrate(eventBusMigrations);
    return { database, bus: await PostgresEventBus.open({ database, clock: new SystemClock() }) };
  };
  const a = await open();
  const b = await open();
  try {
    const rounds: { remote: number; local: number }[] = [];
    for (let round = 0; round < ROUNDS; round += 1) rounds.push(await measure(a.bus, b.bus, `r${round}`));
    const remote = median(rounds.map((r) => r.remote));
    const local = median(rounds.map((r) => r.local));
    process.stderr.write(`cross-instance events: p99 per round: stored on A → received on B ${rounds.map((r) => r.remote.toFixed(1)).join(', ')} ms; write on A ${rounds.map((r) => r.local.toFixed(1)).join(', ')} ms\n`);
    return [
      benchResult({
        name: `cross-instance event delivery p99, stored on A → received on B (baseline: the write's p99; PostgreSQL, ${PUBLISHERS} publishers)`,
        value: remote,
        baseline: local,
        unit: 'ms',
        goal: { of: 'value', atMost: 50 },
      }),
    ];
  } finally {
    for (const instance of [a, b]) {
      await instance.bus.close();
      await instance.database.close();
    }
    await schema.drop();
  }
}

/** One round on fresh topics: p99 of stored on A → received on B, and of the writes on A. */
async function measure(a: PostgresEventBus, b: PostgresEventBus, prefix: string): Promise<{ remote: number; local: number }> {
  const total = PUBLISHERS * EVENTS_PER_PUBLISHER;
  const storedAt = new Map<string, number>();
  const receivedAt = new Map<string, number>();
  const writes: number[] = [];
  let allArrived!: () => void;
  const arrived = new Promise<void>((resolve) => (allArrived = resolve));
  const topics = Array.from({ length: TOPICS }, (_, n) => `${prefix}-topic-${n}`);
  const subscriptions = topics.map((topic) =>
    b.subscribe<{ id: string }>(topic, (event) => {
      receivedAt.set(event.data.id, performance.now());
      if (receivedAt.size === total) allArrived();
    }),
  );
  await Promise.all(
    Array.from({ length: PUBLISHERS }, async (_, publisher) => {
      for (let n = 0; n < EVENTS_PER_PUBLISHER; n += 1) {
        const id = `${publisher}/${n}`;
        const calledAt = performance.now();
        await a.publish(topics[(publisher + n) % TOPICS]!, { id, body: n % 10 === 0 ? LARGE : SMALL });
        storedAt.set(id, performance.now());
        writes.push(performance.now() - calledAt);
      }
    }),
  );
  const timeout = setTimeout(() => allArrived(), 30_000);
  await arrived;
  clearTimeout(timeout);
  for (const subscription of subscriptions) subscription.unsubscribe();
  if (receivedAt.size < total) throw new Error(`only ${receivedAt.size} of ${total} events reached instance B`);
  const delays = [...storedAt].map(([id, at]) => Math.max(0, receivedAt.get(id)! - at));
  return { remote: percentile(delays, 0.99), local: percentile(writes, 0.99) };
}
