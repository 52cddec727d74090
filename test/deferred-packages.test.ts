import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * The npm packages the core's bundle requires on first use (`deferredPackages` in esbuild.mjs):
 * each `dist/deferred/<package>.js` must be what `require(<package>)` gives, since the core's
 * stand-in for it forwards the export names, calls and `new` that `require` showed at build time.
 * Uses what `npm run build` wrote (npm test builds first).
 */
const CORE_DIST = path.resolve(__dirname, '../packages/core/dist');
const DEFERRED = path.join(CORE_DIST, 'deferred');
const requireHere = createRequire(__filename);
/** Packages as the core resolves them (its own lru-cache, not the root's). */
const requireAsCore = createRequire(path.resolve(__dirname, '../packages/core/package.json'));

/** `fastify-busboy.js` → `@fastify/busboy`, as esbuild.mjs names the files. */
function packageOf(file: string, scoped: readonly string[]): string {
  const base = path.basename(file, '.js');
  return scoped.find((name) => name.replace(/^@/, '').replace('/', '-') === base) ?? base;
}

describe('deferred packages (bundled apart, required on first use)', () => {
  before(function () {
    if (!existsSync(path.join(CORE_DIST, 'runloom-core.js'))) throw new Error("packages/core/dist is missing: run 'npm run build' first");
  });

  it('each bundle gives what require() of its package gives: the same kind of export and every export name', () => {
    const files = readdirSync(DEFERRED).filter((file) => file.endsWith('.js'));
    assert.ok(files.length > 0, 'dist/deferred holds the deferred bundles');
    const scoped = Object.keys(JSON.parse(readFileSync(path.resolve(__dirname, '../packages/core/package.json'), 'utf8')).dependencies as Record<string, string>).filter((name) =>
      name.startsWith('@'),
    );
    for (const file of files) {
      const name = packageOf(file, scoped);
      const bundled = requireHere(path.join(DEFERRED, file)) as Record<string, unknown>;
      const real = requireAsCore(name) as Record<string, unknown>;
      assert.equal(typeof bundled, typeof real, `${file} is a ${typeof bundled}, require('${name}') a ${typeof real}`);
      for (const key of Object.keys(real)) assert.ok(key in bundled, `${file} lacks ${name}'s export ${key}`);
    }
  });

  it('the core loads none of them at load: its bundle requires each only through a stand-in', () => {
    const core = readFileSync(path.join(CORE_DIST, 'runloom-core.js'), 'utf8');
    for (const file of readdirSync(DEFERRED).filter((entry) => entry.endsWith('.js'))) {
      assert.ok(core.includes(`require("./deferred/${file}")`), `runloom-core.js requires ./deferred/${file}`);
    }
    const cachedBefore = new Set(Object.keys(requireHere.cache));
    requireHere(path.join(CORE_DIST, 'index.js'));
    const loaded = Object.keys(requireHere.cache).filter((file) => !cachedBefore.has(file) && file.startsWith(DEFERRED));
    assert.deepEqual(loaded, []);
  });

  it("nor Node's node:dns, node:child_process and node:fs/promises (deferredBuiltins), in a process of its own", () => {
    const script = `require(${JSON.stringify(path.join(CORE_DIST, 'index.js'))}); require(${JSON.stringify(path.join(CORE_DIST, 'node.js'))});
      console.log(JSON.stringify(process.moduleLoadList.filter((name) => /^NativeModule (dns|child_process|fs[/]promises)$/.test(name))));`;
    assert.deepEqual(JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })), []);
  });
});
