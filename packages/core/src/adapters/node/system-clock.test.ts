import assert from 'node:assert/strict';
import { clockContract } from '../clock.contract';
import { SystemClock } from './system-clock';

clockContract('SystemClock', () => ({ clock: new SystemClock(), pass: (ms) => new Promise((resolve) => setTimeout(resolve, ms + 2)) }));

describe('SystemClock', () => {
  it('reads the system time', () => {
    const before = Date.now();
    const now = new SystemClock().now().getTime();
    assert.ok(now >= before && now <= Date.now());
  });
});
