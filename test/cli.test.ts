import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import http, { type IncomingMessage } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createTestSchema, TEST_DATABASE_URL } from '../packages/core/test-support/postgres-test-store';

const ROOT = path.resolve(__dirname, '..');
const CLI = path.join(ROOT, 'packages/server-adapter/dist/cli.js');
const LISTENING = /^runloom listening on (http:\/\/127\.0\.0\.1:(\d+))$/m;
const CLIENT = { account: 'acct-cli', id: 'cli-client', secret: 'cli-secret-0123456789' };

interface Cli {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
}

/** The built CLI, as `npm start` and the `runloom` bin run it. */
function runCli(args: string[], env: Record<string, string> = {}): Cli {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Resolves once `pattern` appears on the CLI's stdout; fails with its output if it exits first. */
function printed(cli: Cli, pattern: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const check = (): void => {
      const found = pattern.exec(cli.stdout());
      if (!found) return;
      cli.child.stdout!.off('data', check);
      cli.child.off('exit', onExit);
      resolve(found);
    };
    const onExit = (code: number | null): void => reject(new Error(`the CLI exited with ${code} before printing ${pattern}:\n${cli.stdout()}\n${cli.stderr()}`));
    cli.child.stdout!.on('data', check);
    cli.child.once('exit', onExit);
    check();
  });
}

/** The base URL from the listening line. */
async function listeningUrl(cli: Cli): Promise<string> {
  return (await printed(cli, LISTENING))[1]!;
}

async function token(baseUrl: string, client = CLIENT): Promise<string> {
  const response = await fetch(`${baseUrl}/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: client.id, client_secret: client.secret }),
  });
  assert.equal(response.status, 200, await response.clone().text());
  return ((await response.json()) as { access_token: string }).access_token;
}

describe('runloom CLI', function () {
  this.timeout(60_000);
  let dataDir: string;
  const running: Cli[] = [];

  const serve = (args: string[] = [], env: Record<string, string> = {}): Cli => {
    const cli = runCli(['serve', '--port', '0', '--data-dir', dataDir, ...args], env);
    running.push(cli);
    return cli;
  };

  before(() => {
    // The current sources, bundled as the bin ships them (sql.js wasm and snapshot worker beside it).
    execFileSync(process.execPath, ['esbuild.mjs'], { cwd: ROOT, stdio: 'inherit' });
  });
  beforeEach(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-'));
  });
  afterEach(async () => {
    for (const cli of running.splice(0)) {
      if (cli.child.exitCode === null && cli.child.signalCode === null) {
        cli.child.kill('SIGKILL');
        await cli.exited;
      }
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves on --port 0, prints the listening line, issues tokens to a bootstrap client and guards protected routes', async () => {
    const cli = serve(['--bootstrap-client', `${CLIENT.account}:${CLIENT.id}:${CLIENT.secret}`]);
    const url = await listeningUrl(cli);
    assert.notEqual(Number(new URL(url).port), 0);

    const health = await fetch(`${url}/healthz`);
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { status: 'ok' });

    assert.equal((await fetch(`${url}/v1/webhook-secret`)).status, 401);
    const bearer = await token(url);
    const secret = await fetch(`${url}/v1/webhook-secret`, { headers: { authorization: `Bearer ${bearer}`, 'x-request-id': 'cli-test-1' } });
    assert.equal(secret.status, 200);
    assert.equal(secret.headers.get('x-request-id'), 'cli-test-1');

    cli.child.kill('SIGTERM');
    assert.equal(await cli.exited, 0, cli.stderr());
    // One JSON line per request, naming route, status, duration and account; never a token or secret.
    const line = cli
      .stdout()
      .split('\n')
      .filter((text) => text.startsWith('{'))
      .map((text) => JSON.parse(text) as Record<string, unknown>)
      .find((entry) => entry.requestId === 'cli-test-1');
    assert.ok(line, `no log line for the request in:\n${cli.stdout()}`);
    assert.equal(line.route, 'GET /v1/webhook-secret');
    assert.equal(line.status, 200);
    assert.equal(line.accountId, CLIENT.account);
    assert.equal(typeof line.durationMs, 'number');
    assert.ok(!cli.stdout().includes(bearer) && !cli.stdout().includes(CLIENT.secret), 'the log leaks a credential');
  });

  it('on SIGTERM stops accepting, finishes the in-flight request, flushes the store and exits 0', async () => {
    const cli = serve(['--bootstrap-client', `${CLIENT.account}:${CLIENT.id}:${CLIENT.secret}`]);
    const url = await listeningUrl(cli);
    const bearer = await token(url);
    const rotated = await fetch(`${url}/v1/webhook-secret/rotate`, { method: 'POST', headers: { authorization: `Bearer ${bearer}` } });
    assert.equal(rotated.status, 200);
    const { secret } = (await rotated.json()) as { secret: string };

    // A token request whose body arrives in two parts, with the signal in between. node:http answers
    // `100 Continue` as it hands the request to Runloom, so once it arrives the request is in flight.
    const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: CLIENT.id, client_secret: CLIENT.secret }).toString();
    const slow = http.request(`${url}/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body), expect: '100-continue' },
    });
    const answered = once(slow, 'response') as Promise<[IncomingMessage]>;
    slow.flushHeaders();
    await once(slow, 'continue');
    slow.write(body.slice(0, 10));
    cli.child.kill('SIGTERM');
    // Logged as the shutdown starts, right before the server stops listening.
    await printed(cli, /"msg":"shutting down: finishing in-flight requests"/);
    await assert.rejects(fetch(`${url}/healthz`), 'the server still accepts connections after SIGTERM');
    assert.equal(cli.child.exitCode, null, 'the server exited with a request in flight');
    slow.end(body.slice(10));
    // Answered after the shutdown began: the server stayed up for its in-flight request.
    const [response] = await answered;
    assert.equal(response.statusCode, 200);
    assert.match(await text(response), /"access_token"/);
    assert.equal(await cli.exited, 0, cli.stderr());

    const again = serve();
    const againUrl = await listeningUrl(again);
    const current = await fetch(`${againUrl}/v1/webhook-secret`, { headers: { authorization: `Bearer ${await token(againUrl)}` } });
    assert.deepEqual(await current.json(), { secret }, 'the rotated secret did not survive the restart');
  });

  it('takes its settings from RUNLOOM_* variables', async () => {
    const cli = runCli(['serve'], {
      RUNLOOM_PORT: '0',
      RUNLOOM_DATA_DIR: dataDir,
      RUNLOOM_BASE_PATH: '/api',
      RUNLOOM_BOOTSTRAP_CLIENTS: `other:other-client:other-secret-123,${CLIENT.account}:${CLIENT.id}:${CLIENT.secret}`,
    });
    running.push(cli);
    const url = await listeningUrl(cli);
    assert.equal((await fetch(`${url}/healthz`)).status, 404, 'routes answer only under the base path');
    assert.equal((await fetch(`${url}/api/healthz`)).status, 200);
    assert.ok(await token(`${url}/api`));
    assert.ok(await token(`${url}/api`, { account: 'other', id: 'other-client', secret: 'other-secret-123' }));
  });

  it('exits 2 with a clear message for an unknown flag or a bad value, and 0 for --help', async () => {
    const cases: Array<[string[], Record<string, string>, number, RegExp]> = [
      [['serve', '--port', '0', '--no-such-flag'], {}, 2, /Unknown option '--no-such-flag'/],
      [['serve', '--port', 'eighty'], {}, 2, /--port must be a whole number from 0 to 65535, got 'eighty'/],
      [['serve'], { RUNLOOM_TOKEN_TTL_SECONDS: 'soon' }, 2, /^runloom: RUNLOOM_TOKEN_TTL_SECONDS must be a whole number from 1 to \d+, got 'soon'\n$/],
      [['serve'], { RUNLOOM_ALLOW_PRIVATE_NETWORK: 'maybe' }, 2, /RUNLOOM_ALLOW_PRIVATE_NETWORK must be true or false/],
      [['launch'], {}, 2, /unknown command 'launch'/],
      [['client'], {}, 2, /'runloom client' needs a subcommand: create/],
      [['client', 'delete'], {}, 2, /unknown command 'client delete'/],
      [['help', 'launch'], {}, 2, /no help for 'launch'/],
      [['serve', '--help'], {}, 0, /--bootstrap-client ACCOUNT:CLIENT_ID:SECRET/],
      [['serve', '-h'], {}, 0, /^Usage: runloom serve/],
      [['help', 'serve'], {}, 0, /^Usage: runloom serve/],
      [['client', 'create', '--help'], {}, 0, /^Usage: runloom client create --account ACCOUNT/],
      [['help', 'client', 'create'], {}, 0, /stop a server running on the data dir first/],
      [['client', '--help'], {}, 0, /^Usage: runloom client <subcommand>/],
      [['help'], {}, 0, /runloom help <command>/],
      [['--help'], {}, 0, /serve +start the HTTP server/],
    ];
    await Promise.all(
      cases.map(async ([args, env, code, message]) => {
        const cli = runCli(args, env);
        assert.equal(await cli.exited, code, `runloom ${args.join(' ')}`);
        assert.match(code === 0 ? cli.stdout() : cli.stderr(), message);
      }),
    );
  });

  it('refuses an unusable --data-dir in one line, exit 2, naming the flag or the variable', async () => {
    const file = path.join(dataDir, 'not-a-folder');
    fs.writeFileSync(file, '');
    for (const [args, env, message] of [
      [['serve', '--port', '0', '--data-dir', file], {}, `runloom: --data-dir must be a folder, not a file, got '${file}'\n`],
      [['client', 'create', '--account', 'a', '--data-dir', path.join(file, 'db')], {}, `runloom: --data-dir cannot be created: ${file} is a file, got '${path.join(file, 'db')}'\n`],
      [['serve', '--port', '0'], { RUNLOOM_DATA_DIR: file }, `runloom: RUNLOOM_DATA_DIR must be a folder, not a file, got '${file}'\n`],
    ] as Array<[string[], Record<string, string>, string]>) {
      const cli = runCli(args, env);
      assert.equal(await cli.exited, 2, args.join(' '));
      assert.equal(cli.stderr(), message);
    }
  });

  it('client create on a data dir a running server holds says to stop it or use --bootstrap-client, exit 2, no stack', async () => {
    const server = serve();
    await listeningUrl(server);
    const create = runCli(['client', 'create', '--account', 'acct-held', '--data-dir', dataDir]);
    assert.equal(await create.exited, 2, create.stderr());
    assert.equal(create.stdout(), '');
    assert.match(create.stderr(), new RegExp(`^runloom: the data dir ${dataDir} is in use by another runloom \\(process ${server.child.pid}\\): stop that server first`));
    assert.match(create.stderr(), /--bootstrap-client ACCOUNT:CLIENT_ID:SECRET/);
    assert.doesNotMatch(create.stderr(), /\n\s+at /, 'a stack trace');

    const second = runCli(['serve', '--port', '0', '--data-dir', dataDir]);
    assert.equal(await second.exited, 2, second.stderr());
    assert.match(second.stderr(), /is in use by another runloom .*: stop it first, or give this server another --data-dir/);

    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0, server.stderr());
    const after = runCli(['client', 'create', '--account', 'acct-held', '--data-dir', dataDir]);
    assert.equal(await after.exited, 0, after.stderr());
  });

  it('client create prints credentials that the server then accepts', async () => {
    const create = runCli(['client', 'create', '--account', 'acct-new', '--data-dir', dataDir]);
    assert.equal(await create.exited, 0, create.stderr());
    const printed = JSON.parse(create.stdout()) as { account: string; client_id: string; client_secret: string };
    assert.equal(printed.account, 'acct-new');
    assert.ok(printed.client_id && printed.client_secret);

    const cli = serve();
    const url = await listeningUrl(cli);
    const bearer = await token(url, { account: 'acct-new', id: printed.client_id, secret: printed.client_secret });
    assert.equal((await fetch(`${url}/v1/webhook-secret`, { headers: { authorization: `Bearer ${bearer}` } })).status, 200);

    const missingAccount = runCli(['client', 'create', '--data-dir', dataDir]);
    assert.equal(await missingAccount.exited, 2);
    assert.match(missingAccount.stderr(), /--account is required/);
  });

  it("client create on PostgreSQL takes the server's key; a wrong or missing key says which key and how to pass it", async () => {
    const schema = createTestSchema();
    try {
      const databaseUrl = `${TEST_DATABASE_URL}?schema=${schema.schema}`;
      // The server's key lives in its data dir; the command runs from elsewhere.
      const cli = serve(['--database-url', databaseUrl]);
      const url = await listeningUrl(cli);
      const serverKey = fs.readFileSync(path.join(dataDir, 'secret.key'), 'utf8').trim();
      const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-'));
      try {
        const create = (args: string[], env: Record<string, string> = {}) =>
          runCli(['client', 'create', '--account', 'acct-pg', '--database-url', databaseUrl, '--data-dir', elsewhere, ...args], env);

        for (const [args, env] of [[['--secret-key', serverKey], {}], [[], { RUNLOOM_SECRET_KEY: serverKey }]] as const) {
          const created = create([...args], env);
          assert.equal(await created.exited, 0, created.stderr());
          const printed = JSON.parse(created.stdout()) as { client_id: string; client_secret: string };
          assert.ok(await token(url, { account: 'acct-pg', id: printed.client_id, secret: printed.client_secret }));
        }
        // The server's data dir holds the key too.
        const fromDataDir = runCli(['client', 'create', '--account', 'acct-pg', '--database-url', databaseUrl, '--data-dir', dataDir]);
        assert.equal(await fromDataDir.exited, 0, fromDataDir.stderr());

        const wrong = create(['--secret-key', Buffer.alloc(32, 7).toString('base64')]);
        assert.equal(await wrong.exited, 2);
        assert.match(wrong.stderr(), /^runloom: the secret key does not match this database: .*--secret-key \(or RUNLOOM_SECRET_KEY\), or --data-dir of the server/);
        const missing = create([]);
        assert.equal(await missing.exited, 2);
        assert.match(missing.stderr(), /^runloom: --database-url needs the server's secret key, and .* holds no secret\.key: pass the server's key with --secret-key/);
        for (const failed of [wrong, missing]) {
          assert.equal(failed.stderr().trim().split('\n').length, 1, `one line: ${failed.stderr()}`);
          assert.equal(failed.stdout(), '');
        }
        assert.deepEqual(fs.readdirSync(elsewhere), [], 'no key was generated beside the command');
      } finally {
        fs.rmSync(elsewhere, { recursive: true, force: true });
      }
    } finally {
      await schema.drop();
    }
  });

});

async function text(response: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of response.setEncoding('utf8')) body += chunk as string;
  return body;
}
