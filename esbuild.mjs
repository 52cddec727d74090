// Builds every bundle of the repository (`npm run build`, and `prepare` on `npm install`):
// - the core: packages/core/dist/runloom-core.js, with index.js, node.js and testing.js as views of
//   it (the package's entry points, which load it through require-with-code-cache.js with the V8 code
//   cache write-code-cache.mjs writes beside it), the sql.js snapshot worker, ai-sdk.js (loaded on the first
//   model call), isomorphic-git.js (loaded on the first git operation), s3.js (on the first use of an
//   S3 blob store), deferred/*.js (npm packages required on first use) and sql-wasm.wasm beside them;
// - the server adapter and the `runloom` CLI: packages/server-adapter/dist/index.js and cli.js;
// - the VS Code extension: packages/vscode/dist/extension.js (client) and server.js (language server).
// CommonJS for Node (sql.js relies on dynamic requires that ESM bundles break), names not kept (see
// keepNames below), sourcemaps on; `--watch` rebuilds on change. Type declarations are tsc's (the
// tsconfig.build.json of core and server-adapter, in `npm run build`), not this script's.
import * as esbuild from 'esbuild';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const sqlWasm = require.resolve('sql.js/dist/sql-wasm.wasm');

/**
 * The AI SDK is a bundle of its own, `ai-sdk.js` beside each bundle holding the core, which the
 * core requires on its first model call: inlined, even behind lazy initialisers, its code cost
 * ~20 MB of RSS at start in every server, including those that never call a model. Dynamic
 * `import()`s are emitted as `require()` (`supported` below): Node's ESM loader would hold ~30 MB
 * more than `require` does for that CommonJS bundle.
 */
const aiSdkEntry = path.resolve('packages/core/src/adapters/models/ai-sdk.ts');
/**
 * isomorphic-git likewise, `isomorphic-git.js` required on the first git operation: inlined, its
 * ~570 KB were 13% of runloom-core.js, parsed by every server, most never touching a repository.
 */
const isomorphicGitEntry = path.resolve('packages/core/src/adapters/git/isomorphic-git.ts');
/** The AWS SDK likewise, `s3.js` required on the first use of an S3 blob store: ~1 MB that a server on local blobs never needs. */
const s3Entry = path.resolve('packages/core/src/adapters/s3/s3.ts');
/** The modules bundled apart, each with the file beside the bundle that their importers require. */
const apartFiles = new Map([
  [aiSdkEntry, './ai-sdk.js'],
  [isomorphicGitEntry, './isomorphic-git.js'],
  [s3Entry, './s3.js'],
]);
const bundledApart = {
  name: 'bundled-apart',
  setup(build) {
    build.onResolve({ filter: /\/(ai-sdk|isomorphic-git|s3)$/ }, (args) => {
      const file = args.kind === 'entry-point' ? undefined : apartFiles.get(path.resolve(args.resolveDir, `${args.path}.ts`));
      return file === undefined ? undefined : { path: file, external: true };
    });
  },
};

/**
 * npm packages a server needs only for some requests, each bundled into `deferred/<name>.js` beside
 * every bundle holding the core and required on first use: the core's `import`s of them get a stand-in
 * whose exports load the package when first read (or, for a function, first called). Inlined, they
 * were parsed and initialised by every server at start (mime-db's table alone a tenth of the core's
 * start). Only packages nothing touches at start belong here (`npm run bench -- start` shows it).
 */
const deferredPackages = ['yaml', 'ajv', 'mime-types', 'prom-client', 'minisearch', 'yazl', 'pg', 'picomatch', 'tinyglobby', '@fastify/busboy', 'find-my-way', 'ipaddr.js', 'lru-cache'];
/** Resolves a package as the core's sources do: its own dependencies first (lru-cache 11 there, another version at the root). */
const coreRequire = createRequire(path.resolve('packages/core/package.json'));
/**
 * Node's own modules likewise, when only some requests use them (outbound lookups, spawned
 * processes, files streamed through a FileHandle): their stand-ins require the module itself on
 * first use, with no bundle of their own.
 * Not one a start uses (node:zlib's crc32 frames the store's log, node:http listens).
 */
const deferredBuiltins = ['node:dns', 'node:child_process', 'node:fs/promises'];
const deferredFile = (name) => `deferred/${name.replace(/^@/, '').replace('/', '-')}`;
const deferredEntries = Object.fromEntries(deferredPackages.map((name) => [deferredFile(name), `deferred-entry:${name}`]));
const deferred = {
  name: 'deferred-packages',
  setup(build) {
    const filter = new RegExp(`^(${[...deferredPackages, ...deferredBuiltins].map((name) => name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|')})$`);
    // Our sources' imports only: a package importing another (tinyglobby → picomatch) keeps its copy inline.
    build.onResolve({ filter }, (args) =>
      ['deferred-entry', 'deferred-package'].includes(args.namespace) || args.importer.includes(`${path.sep}node_modules${path.sep}`)
        ? undefined
        : { path: args.path, namespace: 'deferred-package' },
    );
    // The bundle of a package is what `require` gives (the export names `standIn` lists), not its ESM build.
    build.onResolve({ filter: /^deferred-entry:/ }, (args) => ({ path: args.path.slice('deferred-entry:'.length), namespace: 'deferred-entry' }));
    build.onLoad({ filter: /.*/, namespace: 'deferred-entry' }, (args) => ({ contents: `module.exports = require(${JSON.stringify(args.path)});`, resolveDir: path.resolve('packages/core'), loader: 'js' }));
    build.onResolve({ filter: /^\.\/deferred\// }, (args) => ({ path: args.path, external: true }));
    build.onLoad({ filter: /.*/, namespace: 'deferred-package' }, (args) => ({ contents: standIn(args.path), loader: 'js' }));
  },
};

/** CommonJS source of the stand-in of package `name`: its export names (read here, at build time), each loading it on first use. */
function standIn(name) {
  const real = coreRequire(name);
  const load = `let loaded; const load = () => (loaded ??= require(${JSON.stringify(deferredBuiltins.includes(name) ? name : `./${deferredFile(name)}.js`)}));`;
  const names = Object.getOwnPropertyNames(real).filter((key) => typeof real !== 'function' || !['length', 'name', 'prototype', 'arguments', 'caller'].includes(key));
  const getters = names
    .filter((key) => key !== '__esModule')
    .map((key) => `${JSON.stringify(key)}: { get: () => load()[${JSON.stringify(key)}], enumerable: true }`);
  if (real.__esModule) getters.push('__esModule: { value: true }');
  // A function package is called or constructed through its stand-in (`new MiniSearch(…)`, `picomatch(…)`).
  const target =
    typeof real === 'function'
      ? 'function deferred(...args) { return new.target ? Reflect.construct(load(), args) : Reflect.apply(load(), this, args); }'
      : '{}';
  return `${load}\nmodule.exports = Object.defineProperties(${target}, { ${getters.join(', ')} });\n`;
}

/**
 * zod's `locales` namespace, its error messages in ~50 languages (~370 KB, 13% of runloom-core.js),
 * bundled empty: nothing selects a locale, and zod's English messages, the ones we answer with, come
 * from its own import of the English locale, not from this namespace.
 */
const zodWithoutLocales = {
  name: 'zod-without-locales',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      args.importer.includes(`${path.sep}node_modules${path.sep}zod${path.sep}`) ? { path: 'zod-locales', namespace: 'zod-without-locales' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'zod-without-locales' }, () => ({ contents: 'export {};', loader: 'js' }));
  },
};

/**
 * sql.js keeps each database file in Emscripten's MEMFS: one Uint8Array, which a write past its end
 * replaces by one 1.125 times as large (past 1 MiB), copying the whole file. A growing store thus
 * copied every byte it wrote about eight times: two thirds of a commit's cost (a create's 10-13 us,
 * 2-4 us when doubling, stores of 80-490 MB), and each copy stalled the thread for up to 0.2 s once
 * the store was large. The bundles double it instead: each byte is copied about once, and the part
 * not written yet is never touched, so it costs address space, not memory. The build fails when
 * sql.js no longer has the expression (a new version): look again at its MEMFS write then. It fails
 * too when a bundle holds sql.js but no script of it was patched (sql.js's `exports` naming another
 * file) or requires sql.js at run time (external): either would ship the growth unpatched, unseen.
 */
const SQL_JS_GROWTH = 'm*(m<1048576?2:1.125)>>>0';
const SQL_JS_PATH = /[\\/]node_modules[\\/]sql\.js[\\/]/;
const sqlJsFileGrowth = {
  name: 'sql-js-file-growth',
  setup(build) {
    let patched = 0;
    build.onStart(() => {
      patched = 0;
    });
    build.onLoad({ filter: /[\\/]node_modules[\\/]sql\.js[\\/].*\.[cm]?js$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      const at = source.indexOf(SQL_JS_GROWTH);
      // A script of sql.js without MEMFS (a wrapper, say): the check at the end sees whether one had it.
      if (at < 0) return undefined;
      if (source.indexOf(SQL_JS_GROWTH, at + 1) >= 0) throw new Error(`${args.path}: MEMFS's growth (${SQL_JS_GROWTH}) is there more than once`);
      patched += 1;
      return { contents: source.replace(SQL_JS_GROWTH, 'm*2>>>0'), loader: 'js' };
    });
    build.onEnd((result) => {
      const inputs = Object.entries(result.metafile?.inputs ?? {});
      const errors = [];
      if (patched === 0 && inputs.some(([file]) => SQL_JS_PATH.test(path.resolve(file)))) {
        errors.push({ text: `sql.js is bundled but no script of it has MEMFS's growth (${SQL_JS_GROWTH}) to patch: look again at its MEMFS write` });
      }
      const external = inputs.flatMap(([, input]) => input.imports).find((imported) => imported.external && /^sql\.js(\/|$)/.test(imported.path));
      if (external) errors.push({ text: `${external.path} is required at run time, where MEMFS's growth is not patched: bundle it` });
      return { errors };
    });
  },
};

/**
 * Escapes what is left past ASCII in the output: only comments esbuild keeps (its code is ASCII
 * already). One character past Latin-1 in a comment (—, →, …) makes V8 hold the whole bundle's
 * source as a two-byte string, twice its size in every process: 5 MB for the core's 2.6 MB.
 */
const asciiOutput = {
  name: 'ascii-output',
  setup(build) {
    build.onEnd((result) => {
      for (const file of Object.keys(result.metafile?.outputs ?? {})) {
        if (!file.endsWith('.js')) continue;
        const text = readFileSync(file, 'utf8');
        // eslint-disable-next-line no-control-regex -- the range is every ASCII character
        const escaped = text.replace(/[^\x00-\x7f]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
        if (escaped !== text) writeFileSync(file, escaped);
      }
    });
  },
};

/**
 * The public entry points of @runloom/core (its package.json `exports`). They are views of one
 * bundle, `runloom-core.js`, not bundles of their own: a bundle per entry would give each its own
 * copy of the port symbols and error classes, and a host binding `@runloom/core/node`'s adapters to
 * `@runloom/core`'s tokens would get "No bindings found".
 */
const coreEntries = {
  index: 'packages/core/src/index.ts',
  node: 'packages/core/src/node.ts',
  testing: 'packages/core/src/testing/index.ts',
};
const coreNamespace = (name) => (name === 'index' ? 'main' : name);
const coreBundleEntry = {
  name: 'runloom-core-entry',
  setup(build) {
    build.onResolve({ filter: /^runloom-core-entry$/ }, () => ({ path: 'runloom-core-entry', namespace: 'runloom-core-entry' }));
    build.onLoad({ filter: /.*/, namespace: 'runloom-core-entry' }, () => ({
      contents: Object.entries(coreEntries)
        .map(([name, file]) => `export * as ${coreNamespace(name)} from ${JSON.stringify(path.resolve(file))};`)
        .join('\n'),
      resolveDir: path.resolve('packages/core'),
      loader: 'ts',
    }));
  },
};

/** Writes `dist/<entry>.js` for each public entry: its namespace of `runloom-core.js`, names listed for Node's ESM loader. */
function writeCoreEntryPoints(outdir) {
  const bundle = createRequire(path.resolve(outdir, 'runloom-core.js'))('./runloom-core.js');
  for (const name of Object.keys(coreEntries)) {
    const names = Object.keys(bundle[coreNamespace(name)]);
    writeFileSync(
      path.join(outdir, `${name}.js`),
      [
        '"use strict";',
        `// @runloom/core${name === 'index' ? '' : `/${name}`}: a view of runloom-core.js, the one bundle every entry point shares.`,
        `module.exports = require("./require-with-code-cache.js").requireWithCodeCache(require("node:path").join(__dirname, "runloom-core.js")).${coreNamespace(name)};`,
        '// The export names, for the import of this CommonJS module from ECMAScript modules:',
        `0 && (module.exports = { ${names.join(', ')} });`,
        '',
      ].join('\n'),
    );
  }
}

/** What every bundle holding the core has beside it: the sql.js snapshot worker and what the core requires on first use. */
const besideCore = {
  'sqljs-snapshot-worker': 'packages/core/src/adapters/sqljs/snapshot-worker.ts',
  'ai-sdk': aiSdkEntry,
  'isomorphic-git': isomorphicGitEntry,
  s3: s3Entry,
  ...deferredEntries,
};

/**
 * Bundles of this repository; `wasm` marks those that open the embedded sql.js store. The server
 * adapter requires @runloom/core at run time (its dependency), so a host mounting it shares the
 * core it created; inside the repository that resolves to packages/core/dist.
 */
const bundles = [
  {
    entryPoints: {
      'runloom-core': 'runloom-core-entry',
      'require-with-code-cache': 'packages/core/src/require-with-code-cache.ts',
      ...besideCore,
    },
    outdir: 'packages/core/dist',
    plugins: [coreBundleEntry],
    wasm: true,
    after: writeCoreEntryPoints,
  },
  {
    entryPoints: {
      index: 'packages/server-adapter/src/index.ts',
      cli: 'packages/server-adapter/src/cli.ts',
    },
    outdir: 'packages/server-adapter/dist',
    external: ['@runloom/core', '@runloom/core/*'],
    wasm: false,
  },
  {
    // The extension: a thin client in the extension host, and the language server (its own
    // process) that carries the core, with the core's worker, lazily loaded AI SDK and wasm beside it.
    entryPoints: {
      extension: 'packages/vscode/src/client/extension.ts',
      server: 'packages/vscode/src/server/server.ts',
      ...besideCore,
    },
    outdir: 'packages/vscode/dist',
    external: ['vscode'],
    wasm: true,
  },
  {
    // The chat panel's page: a browser script, loaded by the webview under its CSP.
    entryPoints: { chat: 'packages/vscode/src/webview/chat.ts' },
    outdir: 'packages/vscode/dist/webview',
    platform: 'browser',
    format: 'iife',
    wasm: false,
  },
  {
    // The extension's integration suite, run inside a real VS Code (test/vscode-extension.test.ts),
    // and its bench entry (bench/vscode.bench.ts); not part of the .vsix.
    entryPoints: { index: 'packages/vscode/integration/index.ts', bench: 'packages/vscode/integration/bench.ts' },
    outdir: 'packages/vscode/dist-integration',
    external: ['vscode', 'mocha'],
    wasm: false,
  },
];

const watch = process.argv.includes('--watch');
/** The core bundle's V8 code cache: deleted before bundling, so it never outlives the bundle it was made from (watch mode writes none). */
const coreCodeCache = 'packages/core/dist/runloom-core.js.codecache';
rmSync(coreCodeCache, { force: true });
// Likewise the fresh store templates write-code-cache.mjs writes (packages/core/src/adapters/sqljs/fresh-store-template.ts).
if (existsSync('packages/core/dist')) {
  for (const file of readdirSync('packages/core/dist').filter((name) => /^fresh-store-[0-9a-f]+\.sqlite$/.test(name))) rmSync(path.join('packages/core/dist', file));
}

for (const { wasm, external = [], plugins = [], after, ...options } of bundles) {
  const forNode = (options.platform ?? 'node') === 'node';
  const buildOptions = {
    bundle: true,
    platform: 'node',
    target: forNode ? 'node20' : 'es2022',
    format: 'cjs',
    // Names not kept: keepNames wraps every named function in a `__name()` call (an
    // Object.defineProperty) each time it is made, and a request, a run and a model call make many
    // closures. The calls were ~2% of profiles of a sync run; without them `runloom serve` spent 4-10%
    // less CPU per sync run (peer-bullmq bench, alternating pairs; more on a busier machine). A
    // function keeps its source name unless the bundle renamed it, to avoid a clash (`Router2`) or
    // for a class that refers to itself (`_RunExecution`). Nothing reads such a name: errors carry
    // their `name` themselves, and the two the core exports name their class too (DomainError,
    // ApiError, for a host that prints one); DI errors and stack frames only show it.
    keepNames: false,
    sourcemap: true,
    ...(forNode && {
      supported: { 'dynamic-import': false },
      // ESM-only dependencies (fdir, under tinyglobby) read `import.meta.url`, which a CommonJS
      // bundle lacks: give them this file's URL.
      define: { 'import.meta.url': 'importMetaUrl' },
      banner: { js: 'const importMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
    }),
    logLevel: 'warning',
    ...options,
    external: [...external, 'pg-native'],
    metafile: true,
    plugins: [...plugins, bundledApart, zodWithoutLocales, sqlJsFileGrowth, ...(forNode ? [deferred, asciiOutput] : [])],
  };
  mkdirSync(options.outdir, { recursive: true });
  if (wasm) copyFileSync(sqlWasm, path.join(options.outdir, 'sql-wasm.wasm'));
  if (watch) {
    const context = await esbuild.context({ ...buildOptions, plugins: [...buildOptions.plugins, afterEachBuild(after, options.outdir)] });
    await context.watch();
  } else {
    await esbuild.build(buildOptions);
    after?.(options.outdir);
  }
  removeStaleDeferred(options.outdir);
}
// After every bundle: it starts a server through the server adapter's bundle. Without the cache (or
// the template) the core only starts slower, so a failure (a machine where no server can listen)
// warns, not fails.
if (!watch) {
  try {
    execFileSync(process.execPath, ['write-code-cache.mjs'], { stdio: ['ignore', 'ignore', 'inherit'] });
  } catch (error) {
    console.warn(`esbuild.mjs: no code cache or fresh store template for the core (${error.message}); it starts without them`);
  }
}

/** Drops the bundles of packages taken off `deferredPackages`, so none ships stale (after the build: a server running meanwhile keeps its files). */
function removeStaleDeferred(outdir) {
  const directory = path.join(outdir, 'deferred');
  if (!existsSync(directory)) return;
  const current = new Set(Object.keys(deferredEntries).map((entry) => path.basename(entry)));
  for (const file of readdirSync(directory)) {
    if (!current.has(file.replace(/\.js(\.map)?$/, ''))) rmSync(path.join(directory, file), { force: true });
  }
}

/** Runs `after` at the end of each successful rebuild in watch mode. */
function afterEachBuild(after, outdir) {
  return {
    name: 'after-each-build',
    setup(build) {
      build.onEnd((result) => {
        if (after && result.errors.length === 0) after(outdir);
      });
    },
  };
}
