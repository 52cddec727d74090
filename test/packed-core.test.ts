import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startFakeVendor, type FakeVendorServer } from '../packages/core/src/testing/fake-vendors';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..');
const CORE = path.join(ROOT, 'packages/core');
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');

/** The TypeScript program of the README's "Embedding the core in a Node app" section. */
function readmeEmbeddingProgram(): string {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.split('\n## Embedding the core in a Node app\n')[1];
  const program = section?.match(/```ts\n([\s\S]*?)```/)?.[1];
  if (!program) throw new Error("README.md has no ```ts block under '## Embedding the core in a Node app'");
  return program;
}

/**
 * What `npm install <tarball>` lays out, in a second instead of ~40: the tarball unpacked as
 * node_modules/@runloom/core and each dependency it declares linked from the monorepo's install.
 * Only declared dependencies are beside it, so a declaration file naming any other package fails
 * to resolve as it would for a consumer. RUNLOOM_PACKED_NPM_INSTALL=1 runs npm instead.
 */
async function installFromMonorepo(tarball: string, app: string): Promise<void> {
  const target = path.join(app, 'node_modules/@runloom/core');
  mkdirSync(target, { recursive: true });
  await run('tar', ['-xzf', tarball, '-C', target, '--strip-components=1']);
  const { dependencies = {} } = JSON.parse(readFileSync(path.join(target, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  for (const name of Object.keys(dependencies)) {
    const link = path.join(app, 'node_modules', name);
    mkdirSync(path.dirname(link), { recursive: true });
    symlinkSync(path.join(ROOT, 'node_modules', name), link, 'dir');
  }
}

/**
 * @runloom/core as a stranger gets it: `npm pack`ed, installed by name into an empty app, imported
 * from a strict NodeNext TypeScript program (no skipLibCheck, no experimentalDecorators), and run.
 * Uses what `npm run build` wrote (npm test builds first).
 */
describe('the packed @runloom/core in a scratch app', function () {
  this.timeout(240_000);
  let app: string;
  let openai: FakeVendorServer;

  before(async () => {
    for (const built of ['dist/index.js', 'dist/types/index.d.ts']) {
      if (!existsSync(path.join(CORE, built))) throw new Error(`packages/core/${built} is missing: run 'npm run build' first`);
    }
    app = mkdtempSync(path.join(tmpdir(), 'runloom-packed-core-'));
    openai = await startFakeVendor('openai');
  });

  after(async () => {
    await openai?.close();
    if (app) rmSync(app, { recursive: true, force: true });
  });

  it('packs dist only: the entry points, declarations, the code cache, the AI SDK bundle, the wasm and a fresh store template, no sources or maps', async () => {
    const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', app], { cwd: CORE });
    const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
    const files = packed!.files.map((file) => file.path);
    for (const expected of ['package.json', 'dist/index.js', 'dist/node.js', 'dist/testing.js', 'dist/runloom-core.js', 'dist/runloom-core.js.codecache', 'dist/require-with-code-cache.js', 'dist/ai-sdk.js', 'dist/sql-wasm.wasm', 'dist/sqljs-snapshot-worker.js', 'dist/types/index.d.ts', 'dist/types/node.d.ts', 'dist/types/testing/index.d.ts']) {
      assert.ok(files.includes(expected), `${expected} is not in the package`);
    }
    assert.ok(files.some((file) => /^dist\/fresh-store-[0-9a-f]+\.sqlite$/.test(file)), 'no fresh store template is in the package');
    const unexpected = files.filter((file) => !(file === 'package.json' || /^README|^LICENSE/i.test(file) || file.startsWith('dist/')) || file.endsWith('.map') || file.endsWith('.tsbuildinfo'));
    assert.deepEqual(unexpected, []);
  });

  it("installs the tarball, type-checks the README's program under NodeNext + strict with zero errors, and runs it", async () => {
    const tarball = readdirSync(app).find((name) => name.endsWith('.tgz'));
    assert.ok(tarball, 'npm pack wrote no tarball');
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'scratch-app', private: true, type: 'module', dependencies: { '@runloom/core': `file:./${tarball}` } }));
    if (process.env.RUNLOOM_PACKED_NPM_INSTALL) {
      // npm itself, from the local cache where it can: ~40 s here even with a warm cache.
      await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'], { cwd: app });
    } else {
      await installFromMonorepo(path.join(app, tarball!), app);
    }
    writeFileSync(path.join(app, 'index.ts'), readmeEmbeddingProgram());
    writeFileSync(
      path.join(app, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, outDir: 'out' }, files: ['index.ts'] }),
    );
    const compiled = await run(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: app }).catch((error: { stdout?: string }) => error);
    assert.equal(compiled.stdout, '', `tsc reported errors:\n${compiled.stdout}`);

    const { stdout } = await run(process.execPath, ['out/index.js'], {
      cwd: app,
      env: { ...process.env, OPENAI_BASE_URL: openai.baseUrl, OPENAI_API_KEY: openai.credentials.api_key, RUNLOOM_DATA_DIR: path.join(app, 'data') },
    });
    assert.equal(stdout, 'succeeded Hello from openai\nhealthz 200\n');
    assert.equal((await openai.waitForRequests(1)).path, '/v1/chat/completions');
  });
});
