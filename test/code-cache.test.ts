import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * The core bundle's V8 code cache (packages/core/src/require-with-code-cache.ts, written by
 * write-code-cache.mjs at build time): the package's entry points load the bundle with it, and a
 * cache V8 refuses leaves the bundle compiling as it would without one. Each case runs in a plain
 * `node` (V8 takes a cache only under the flags it was made with, and mocha's process has tsx's).
 * Uses what `npm run build` wrote (npm test builds first).
 */
const run = promisify(execFile);
const CORE_DIST = path.resolve(__dirname, '../packages/core/dist');
const LOADER = path.join(CORE_DIST, 'require-with-code-cache.js');

/** Runs `program` in a fresh `node`; answers its stdout. */
async function node(program: string): Promise<string> {
  const { stdout } = await run(process.execPath, ['-e', program]);
  return stdout;
}

describe('the core bundle loads with its V8 code cache', () => {
  let scratch: string;

  before(function () {
    if (!existsSync(path.join(CORE_DIST, 'runloom-core.js.codecache'))) throw new Error("packages/core/dist has no code cache: run 'npm run build' first");
    scratch = mkdtempSync(path.join(tmpdir(), 'runloom-code-cache-'));
  });

  after(() => rmSync(scratch, { recursive: true, force: true }));

  it('@runloom/core and @runloom/core/node load the bundle with the cache the build wrote', async () => {
    const answer = await node(`
      const core = require(${JSON.stringify(path.join(CORE_DIST, 'index.js'))});
      const node = require(${JSON.stringify(path.join(CORE_DIST, 'node.js'))});
      const { codeCacheAccepted } = require(${JSON.stringify(LOADER)});
      process.stdout.write(JSON.stringify({
        accepted: codeCacheAccepted(${JSON.stringify(path.join(CORE_DIST, 'runloom-core.js'))}),
        createRunloom: typeof core.createRunloom,
        PinoLogger: typeof node.PinoLogger,
      }));`);
    assert.deepEqual(JSON.parse(answer), { accepted: true, createRunloom: 'function', PinoLogger: 'function' });
  });

  for (const [name, cache] of [
    ['a cache V8 refuses', Buffer.from('not a V8 code cache')],
    ['no cache', undefined],
  ] as const) {
    it(`with ${name}, the bundle compiles as without one and starts a server`, async () => {
      const dir = mkdtempSync(path.join(scratch, 'dist-'));
      // The bundle and the loader copied; what the bundle requires beside it (deferred packages, wasm, worker) linked.
      for (const file of readdirSync(CORE_DIST)) {
        if (file === 'runloom-core.js' || file === 'require-with-code-cache.js') copyFileSync(path.join(CORE_DIST, file), path.join(dir, file));
        else if (!file.startsWith('runloom-core.js')) symlinkSync(path.join(CORE_DIST, file), path.join(dir, file));
      }
      const bundle = path.join(dir, 'runloom-core.js');
      if (cache) writeFileSync(`${bundle}.codecache`, cache);
      const answer = await node(`
        const { requireWithCodeCache, codeCacheAccepted } = require(${JSON.stringify(path.join(dir, 'require-with-code-cache.js'))});
        const { createRunloom } = requireWithCodeCache(${JSON.stringify(bundle)}).main;
        createRunloom({ dataDir: ${JSON.stringify(path.join(dir, 'data'))} }).then(async (runloom) => {
          const health = await runloom.handle(new Request('http://localhost/healthz'));
          await runloom.close();
          process.stdout.write(JSON.stringify({ accepted: codeCacheAccepted(${JSON.stringify(bundle)}) ?? null, health: health.status }));
        });`);
      assert.deepEqual(JSON.parse(answer), { accepted: cache ? false : null, health: 200 });
    });
  }
});
