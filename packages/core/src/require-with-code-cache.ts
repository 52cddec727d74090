import { isAscii } from 'node:buffer';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire, Module } from 'node:module';
import path from 'node:path';
import { Script } from 'node:vm';

/**
 * Loads the core's bundle (`dist/runloom-core.js`, CommonJS) as Node's `require` would, but compiled
 * with V8's code cache written beside it at build time (`<bundle>.codecache`, see
 * `write-code-cache.mjs`): the bytecode of the top level and of every function a started server had
 * run, so a process neither parses the bundle's 2.4 MB nor compiles those functions again (about a
 * third of `runloom serve`'s start). V8 rejects a cache made by another V8 version, with other V8
 * flags or for a source of another length, and then compiles the bundle as usual; the build deletes
 * the cache before it bundles, so no cache outlives the bundle it was made from.
 *
 * `dist/index.js`, `node.js` and `testing.js` (the package's entry points) load the bundle through
 * this, so they share one copy of it as before.
 */

type CommonJsWrapper = (exports: unknown, require: NodeJS.Require, module: Module, filename: string, dirname: string) => void;

/** The compiled scripts of the bundles this process loaded, for `writeCodeCaches`. */
const scripts = new Map<string, Script>();

/** Where the code cache of `bundle` is. */
function codeCacheFile(bundle: string): string {
  return `${bundle}.codecache`;
}

/** `require(bundle)`, compiled with its code cache when V8 accepts it (`bundle` is an absolute path). */
export function requireWithCodeCache(bundle: string): unknown {
  const loaded = require.cache[bundle];
  if (loaded) return loaded.exports;
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${readSource(bundle)}\n})`, {
    filename: bundle,
    cachedData: readCodeCache(bundle),
  });
  const module = new Module(bundle);
  module.filename = bundle;
  // Registered before it runs, as `require` does, so a cycle back into the bundle gets its exports so far.
  require.cache[bundle] = module;
  try {
    (script.runInThisContext() as CommonJsWrapper)(module.exports, createRequire(bundle), module, bundle, path.dirname(bundle));
  } catch (error) {
    delete require.cache[bundle];
    throw error;
  }
  module.loaded = true;
  scripts.set(bundle, script);
  return module.exports;
}

/** Whether V8 took the code cache of `bundle` (loaded by `requireWithCodeCache`); undefined when it had none. */
export function codeCacheAccepted(bundle: string): boolean | undefined {
  const script = scripts.get(bundle);
  if (!script) throw new Error(`${bundle} was not loaded through requireWithCodeCache`);
  return script.cachedDataRejected === undefined ? undefined : !script.cachedDataRejected;
}

/**
 * Writes the code cache of every bundle this process loaded: what V8 has compiled of it so far, so
 * call it once the work the cache is for (a server's start) has run.
 */
export function writeCodeCaches(): void {
  for (const [bundle, script] of scripts) writeFileSync(codeCacheFile(bundle), script.createCachedData());
}

/**
 * The text of `bundle`. The build writes bundles in ASCII (esbuild.mjs's `asciiOutput`), which
 * decodes as Latin-1 at half the CPU of UTF-8 (~3 ms of a start for the core's); anything else is
 * read as UTF-8.
 */
function readSource(bundle: string): string {
  const bytes = readFileSync(bundle);
  return isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
}

/** The code cache of `bundle`, if it can be read: without one, the bundle compiles as usual. */
function readCodeCache(bundle: string): Buffer | undefined {
  try {
    return readFileSync(codeCacheFile(bundle));
  } catch {
    return undefined;
  }
}
