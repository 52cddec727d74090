// Writes what a start reads beside the core's bundle (esbuild.mjs runs it after bundling, in a
// process of its own: V8 takes a code cache only in a process started with the same V8 flags, so
// this one has none, like `runloom serve` and most hosts when they load the core):
// - packages/core/dist/fresh-store-<hash>.sqlite, the template of a fresh store migrated by the
//   core's migrations (packages/core/src/adapters/sqljs/fresh-store-template.ts), read from a first
//   start on a scratch data dir;
// - packages/core/dist/runloom-core.js.codecache: it starts a server as `runloom serve` does on a
//   fresh data dir (its JSON logs on stdout, which esbuild.mjs drops), answers one request, then
//   saves what V8 compiled of the bundle by then (see packages/core/src/require-with-code-cache.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';

const require = createRequire(import.meta.url);
const { writeCodeCaches } = require('./packages/core/dist/require-with-code-cache.js');
const { createRunloom, ContainerModule, Lifecycle, Logger, Migrations } = require('./packages/core/dist/index.js');
const { PinoLogger, writeFreshStoreTemplate } = require('./packages/core/dist/node.js');
const { createRequestListener } = require('./packages/server-adapter/dist/index.js');

{
  const dataDir = mkdtempSync(path.join(tmpdir(), 'runloom-fresh-store-'));
  try {
    let migrations = [];
    // A lifecycle of the host's, to be handed every feature's migrations in the order createRunloom applies them.
    const readMigrations = new ContainerModule(({ bind, rebind }) => {
      rebind(Logger).toConstantValue({ info() {}, warn() {}, error() {} });
      bind(Lifecycle).toResolvedValue((all) => ((migrations = all.flat()), { name: 'read migrations' }), [{ isMultiple: true, serviceIdentifier: Migrations }]);
    });
    await (await createRunloom({ dataDir, modules: [readMigrations] })).close();
    await writeFreshStoreTemplate(path.resolve('packages/core/dist'), migrations);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const dataDir = mkdtempSync(path.join(tmpdir(), 'runloom-code-cache-'));
try {
  const logger = new PinoLogger();
  const runloom = await createRunloom({ dataDir, modules: [new ContainerModule(({ rebind }) => void rebind(Logger).toConstantValue(logger))] });
  const server = http.createServer(createRequestListener(runloom));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const answer = await fetch(`http://127.0.0.1:${server.address().port}/healthz`);
  if (answer.status !== 200) throw new Error(`GET /healthz answered ${answer.status}`);
  writeCodeCaches();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await runloom.close();
  logger.flushSync();
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
