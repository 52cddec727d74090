import assert from 'node:assert/strict';
import type { Logger } from '../../ports/logger';
import { describeEventBusContract } from '../event-bus.contract';
import { MemoryEventBus } from './memory-event-bus';

describeEventBusContract('MemoryEventBus', async ({ backlogPerTopic }) => ({ bus: new MemoryEventBus({ backlogPerTopic }) }));

describe('MemoryEventBus', () => {
  it('keeps 1000 events per topic by default', async () => {
    const bus = new MemoryEventBus();
    for (let n = 1; n <= 1005; n += 1) await bus.publish('t', n);
    const seqs: number[] = [];
    bus.subscribe('t', (event) => seqs.push(event.seq), { after: 0 });
    assert.equal(seqs.length, 1000);
    assert.deepEqual([seqs[0], seqs.at(-1)], [6, 1005]);
    await bus.close();
  });

  it('forgets the least recently published idle topic past maxTopics, never one with subscribers', async () => {
    const bus = new MemoryEventBus({ maxTopics: 2 });
    const watched: number[] = [];
    bus.subscribe('watched', (event) => watched.push(event.seq));
    await bus.publish('watched', 'w1');
    await bus.publish('idle', 'i1');
    await bus.publish('idle', 'i2');
    await bus.publish('fresh', 'f1');
    assert.equal((await bus.publish('idle', 'again')).seq, 1, 'the idle topic was forgotten');
    assert.equal((await bus.publish('watched', 'w2')).seq, 2, 'the subscribed topic was kept');
    assert.deepEqual(watched, [1, 2]);
    await bus.close();
  });

  it('logs a throwing handler with the topic and sequence, never the data', async () => {
    const warnings: Record<string, unknown>[] = [];
    const logger: Logger = { info() {}, error() {}, warn: (fields) => warnings.push(fields) };
    const bus = new MemoryEventBus({ logger });
    bus.subscribe('t', () => {
      throw new Error('boom');
    });
    await bus.publish('t', { secret: 'do-not-log' });
    assert.deepEqual(warnings, [{ topic: 't', seq: 1, error: 'boom' }]);
    await bus.close();
  });

  it('refuses publish and subscribe once closed', async () => {
    const bus = new MemoryEventBus();
    await bus.close();
    await assert.rejects(bus.publish('t', 1), /closed/);
    assert.throws(() => bus.subscribe('t', () => {}), /closed/);
  });
});
