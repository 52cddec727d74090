// One script builds every bundle: CommonJS for Node (sql.js and isomorphic-git rely on dynamic
// requires that ESM bundles break), names kept so DI errors name real classes, sourcemaps on.
import * as esbuild from 'esbuild';
import { copyFileSync, mkdirSync } from 'node:fs';
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
const aiSdkApart = {
  name: 'ai-sdk-apart',
  setup(build) {
    build.onResolve({ filter: /\/ai-sdk$/ }, (args) =>
      args.kind !== 'entry-point' && path.resolve(args.resolveDir, `${args.path}.ts`) === aiSdkEntry
        ? { path: './ai-sdk.js', external: true }
        : undefined,
    );
  },
};

/** Bundles of this repository; `wasm` marks those that open the embedded sql.js store. */
const bundles = [
  {
    entryPoints: {
      index: 'packages/core/src/index.ts',
      'sqljs-snapshot-worker': 'packages/core/src/adapters/sqljs/snapshot-worker.ts',
      'ai-sdk': aiSdkEntry,
    },
    outdir: 'packages/core/dist',
    wasm: true,
  },
  {
    entryPoints: {
      index: 'packages/server-adapter/src/index.ts',
      cli: 'packages/server-adapter/src/cli.ts',
      'sqljs-snapshot-worker': 'packages/core/src/adapters/sqljs/snapshot-worker.ts',
      'ai-sdk': aiSdkEntry,
    },
    outdir: 'packages/server-adapter/dist',
    wasm: true,
  },
  {
    entryPoints: {
      extension: 'packages/vscode/src/extension.ts',
    },
    outdir: 'packages/vscode/dist',
    external: ['vscode'],
    wasm: false,
  },
];

const watch = process.argv.includes('--watch');

for (const { wasm, external = [], ...options } of bundles) {
  const buildOptions = {
    ...options,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    keepNames: true,
    sourcemap: true,
    external: [...external, 'pg-native'],
    plugins: [aiSdkApart],
    supported: { 'dynamic-import': false },
    logLevel: 'warning',
  };
  mkdirSync(options.outdir, { recursive: true });
  if (wasm) copyFileSync(sqlWasm, path.join(options.outdir, 'sql-wasm.wasm'));
  if (watch) {
    const context = await esbuild.context(buildOptions);
    await context.watch();
  } else {
    await esbuild.build(buildOptions);
  }
}
