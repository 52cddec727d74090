import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
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

  it('writes buffered stdout lines out while the process runs, never fsyncing stdout', async function () {
    this.timeout(20_000);
    // A child that logs in bursts for longer than several flush delays, then waits without exiting
    // (an exit would flush anyway): each burst must reach stdout on its own. A sync of stdout per
    // flush would be a disk sync when stdout is a file; the child counts them.
    const script = `
      const fs = require('node:fs');
      let fsyncs = 0;
      const fsync = fs.fsync;
      fs.fsync = (...args) => { fsyncs += 1; return fsync(...args); };
      const { PinoLogger } = require(${JSON.stringify(require.resolve('./pino-logger'))});
      const logger = new PinoLogger();
      let burst = 0;
      const timer = setInterval(() => {
        for (let line = 0; line < 200; line += 1) logger.info({ burst, line }, 'request');
        if (++burst < 20) return;
        clearInterval(timer);
        setTimeout(() => process.stderr.write('fsyncs ' + fsyncs + '\\n'), 200);
      }, 5);
      setTimeout(() => {}, 60_000);
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    try {
      await new Promise<void>((resolve, reject) => {
        const check = (): void => {
          if (stdout.includes('"burst":19,"line":199,') && /fsyncs \d+\n/.test(stderr)) resolve();
        };
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
          check();
        });
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          check();
        });
        child.once('exit', (code) => reject(new Error(`the child exited (${code}): ${stderr}`)));
      });
    } finally {
      child.kill();
    }
    assert.equal(stdout.split('\n').filter(Boolean).length, 4000);
    assert.match(stderr, /fsyncs 0\n/);
  });

  it('writes the lines still waiting when the process exits, of every stdout logger, through one exit listener', async function () {
    this.timeout(20_000);
    // Twelve loggers (an app that creates a Runloom per tenant or per test): listeners per logger
    // would pass Node's limit of ten and warn on stderr.
    const script = `
      const { PinoLogger } = require(${JSON.stringify(require.resolve('./pino-logger'))});
      const loggers = [new PinoLogger()];
      const listenersAfterOne = process.listenerCount('exit');
      for (let more = 1; more < 12; more += 1) loggers.push(new PinoLogger());
      for (let line = 0; line < 24; line += 1) loggers[line % 12].info({ line }, 'before exit');
      process.stderr.write('exit listeners added by 11 more loggers: ' + (process.listenerCount('exit') - listenersAfterOne) + '\\n');
      process.exit(0);
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await once(child, 'close')) as [number];
    assert.equal(code, 0, stderr);
    assert.equal(stderr, 'exit listeners added by 11 more loggers: 0\n');
    assert.deepEqual(
      stdout.split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { line: number }).line),
      Array.from({ length: 24 }, (_, line) => line),
    );
  });
});
