import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { loggerContract } from '../logger.contract';
import { PinoLogger, SilentLogger } from './pino-logger';

/** Collects what a PinoLogger writes, one parsed JSON object per line. */
function capture(): { lines: Record<string, unknown>[]; destination: Writable } {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { lines, destination };
}

loggerContract('PinoLogger', () => new PinoLogger(capture().destination));
loggerContract('SilentLogger', () => new SilentLogger());

describe('PinoLogger', () => {
  it('writes one JSON line per call with the fields, the message and the level', async () => {
    const { lines, destination } = capture();
    const logger = new PinoLogger(destination, 'info');
    logger.info({ route: 'GET /healthz', status: 200 }, 'request');
    logger.error({ route: 'POST /v1/runs' }, 'request failed');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(lines.length, 2);
    assert.deepEqual([lines[0]!.route, lines[0]!.status, lines[0]!.msg, lines[0]!.level], ['GET /healthz', 200, 'request', 30]);
    assert.equal(lines[1]!.level, 50);
  });
});
