import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dataDirProblem, parseClientCreateOptions, parseServeOptions, usage, UsageError } from './cli-options';

const SERVE_USAGE = usage('serve');
const CLIENT_CREATE_USAGE = usage('client create');

const KEY = Buffer.alloc(32, 7).toString('base64');

describe('runloom serve options', () => {
  it('defaults to 127.0.0.1:8787 and ./.runloom-data, leaving the rest to the core defaults', () => {
    assert.deepEqual(parseServeOptions([], {}), {
      host: '127.0.0.1',
      port: 8787,
      runloom: {
        dataDir: path.resolve('.runloom-data'),
        databaseUrl: undefined,
        bootstrapClients: [],
        egressAllow: [],
        allowPrivateNetwork: undefined,
        shellCommands: undefined,
        basePath: undefined,
        tokenTtlSeconds: undefined,
        callbackMaxAttempts: undefined,
        callbackInitialBackoffMs: undefined,
        rateLimit: undefined,
        jsonBodyLimitBytes: undefined,
        uploadLimitBytes: undefined,
        runConcurrency: undefined,
        runConcurrencyPerAccount: undefined,
        threadStreamIdleTimeoutMs: undefined,
        workspacesDir: undefined,
        blobStore: undefined,
        s3Endpoint: undefined,
        secretKey: undefined,
        metricsToken: undefined,
      },
    });
  });

  it('reads every flag of runloom serve', () => {
    const options = parseServeOptions(
      [
        '--host', '0.0.0.0', '--port', '0', '--data-dir', '/tmp/d', '--database-url', 'postgres://u@db/x',
        '--bootstrap-client', 'acct-a:c1:s:with:colons', '--bootstrap-client', 'acct-b:c2:s2', '--allow-private-network',
        '--base-path', '/api/', '--token-ttl-seconds', '60', '--callback-max-attempts', '3',
        '--callback-initial-backoff-ms', '10', '--rate-limit', '0', '--secret-key', KEY, '--blob-store', 's3://runloom-blobs/prod/a', '--s3-endpoint', 'http://127.0.0.1:9000',
        '--json-body-limit-bytes', '2048', '--upload-limit-bytes', '4096', '--run-concurrency', '4', '--run-concurrency-per-account', '2',
        '--metrics-token', 'scrape-me', '--workspaces-dir', '/tmp/w', '--thread-stream-idle-timeout-ms', '7000', '--enable-shell-commands',
      ],
      {},
    );
    assert.deepEqual(options, {
      host: '0.0.0.0',
      port: 0,
      runloom: {
        dataDir: '/tmp/d',
        databaseUrl: 'postgres://u@db/x',
        bootstrapClients: ['acct-a:c1:s:with:colons', 'acct-b:c2:s2'],
        egressAllow: [],
        allowPrivateNetwork: true,
        shellCommands: true,
        basePath: '/api',
        tokenTtlSeconds: 60,
        callbackMaxAttempts: 3,
        callbackInitialBackoffMs: 10,
        rateLimit: 0,
        jsonBodyLimitBytes: 2048,
        uploadLimitBytes: 4096,
        runConcurrency: 4,
        runConcurrencyPerAccount: 2,
        threadStreamIdleTimeoutMs: 7000,
        workspacesDir: '/tmp/w',
        blobStore: 's3://runloom-blobs/prod/a',
        s3Endpoint: 'http://127.0.0.1:9000',
        secretKey: KEY,
        metricsToken: 'scrape-me',
      },
    });
  });

  it('reads RUNLOOM_* variables, and flags win over them', () => {
    const env = {
      RUNLOOM_HOST: '::1',
      RUNLOOM_PORT: '9000',
      RUNLOOM_TOKEN_TTL_SECONDS: '120',
      RUNLOOM_ALLOW_PRIVATE_NETWORK: 'true',
      RUNLOOM_BASE_PATH: '/env',
      RUNLOOM_BOOTSTRAP_CLIENTS: 'acct-a:c1:env-secret, acct-b:c2:s2',
      RUNLOOM_METRICS_TOKEN: 'env-metrics-token',
    };
    const options = parseServeOptions(['--port', '0', '--bootstrap-client', 'acct-a:c1:flag-secret'], env)!;
    assert.equal(options.host, '::1');
    assert.equal(options.port, 0);
    assert.equal(options.runloom.tokenTtlSeconds, 120);
    assert.equal(options.runloom.allowPrivateNetwork, true);
    assert.equal(options.runloom.basePath, '/env');
    assert.equal(options.runloom.metricsToken, 'env-metrics-token');
    // Upserted in order, so the flag's secret is the one c1 ends with.
    assert.deepEqual(options.runloom.bootstrapClients, ['acct-a:c1:env-secret', 'acct-b:c2:s2', 'acct-a:c1:flag-secret']);
  });

  it('answers --help with undefined and documents every flag with its variable', () => {
    assert.equal(parseServeOptions(['--help'], {}), undefined);
    for (const flag of ['--host', '--port', '--data-dir', '--database-url', '--bootstrap-client', '--allow-private-network', '--base-path',
      '--token-ttl-seconds', '--callback-max-attempts', '--callback-initial-backoff-ms', '--rate-limit', '--secret-key', '--blob-store',
      '--json-body-limit-bytes', '--upload-limit-bytes', '--run-concurrency', '--run-concurrency-per-account', '--metrics-token']) {
      assert.ok(SERVE_USAGE.includes(flag), flag);
    }
    assert.ok(SERVE_USAGE.includes('RUNLOOM_BOOTSTRAP_CLIENTS'));
    assert.ok(SERVE_USAGE.includes('RUNLOOM_CALLBACK_INITIAL_BACKOFF_MS'));
    assert.ok(SERVE_USAGE.includes('RUNLOOM_METRICS_TOKEN'));
  });

  const refused: Array<[string, string[], Record<string, string>, RegExp]> = [
    ['an unknown flag', ['--no-such-flag'], {}, /Unknown option '--no-such-flag'/],
    ['a flag without its value', ['--port'], {}, /--port/],
    ['a positional argument', ['extra'], {}, /Unexpected argument 'extra'/],
    ['a port that is not a number', ['--port', 'http'], {}, /--port must be a whole number from 0 to 65535/],
    ['a port out of range', ['--port', '70000'], {}, /--port must be/],
    ['a bad port in the environment, naming the variable', [], { RUNLOOM_PORT: '-1' }, /^RUNLOOM_PORT must be a whole number from 0 to 65535, got '-1'$/],
    ['a bad token lifetime in the environment', [], { RUNLOOM_TOKEN_TTL_SECONDS: 'soon' }, /^RUNLOOM_TOKEN_TTL_SECONDS must be a whole number/],
    ['an empty host in the environment', [], { RUNLOOM_HOST: ' ' }, /^RUNLOOM_HOST must not be empty/],
    ['a bad database URL in the environment', [], { RUNLOOM_DATABASE_URL: 'mysql://x' }, /^RUNLOOM_DATABASE_URL must be a postgres:\/\/ URL/],
    ['a zero token lifetime', ['--token-ttl-seconds', '0'], {}, /--token-ttl-seconds must be a whole number from 1/],
    ['a negative rate limit', ['--rate-limit=-5'], {}, /--rate-limit must be a number ≥ 0/],
    ['a malformed bootstrap client', ['--bootstrap-client', 'acct-a:only-id'], {}, /^--bootstrap-client \(entry 1\) must be ACCOUNT:CLIENT_ID:SECRET/],
    [
      'a malformed bootstrap client in the environment, naming the variable and the entry',
      ['--bootstrap-client', 'a:b:c'],
      { RUNLOOM_BOOTSTRAP_CLIENTS: 'acct-a:c1:s1,acct-b:c2' },
      /^RUNLOOM_BOOTSTRAP_CLIENTS \(entry 2\) must be ACCOUNT:CLIENT_ID:SECRET/,
    ],
    ['a base path without a leading slash', ['--base-path', 'api'], {}, /--base-path must look like \/prefix/],
    ['a secret key of the wrong size', ['--secret-key', Buffer.alloc(16).toString('base64')], {}, /32 bytes in base64/],
    ['an egress allow entry that is not host[:port]', ['--egress-allow', 'http://llm.lan/v1'], {}, /^--egress-allow must .*'http:\/\/llm\.lan\/v1' is not host\[:port\]|^--egress-allow.*not host\[:port\]/],
    ['an egress allow port out of range, naming the variable', [], { RUNLOOM_EGRESS_ALLOW: 'llm.lan:99999' }, /^RUNLOOM_EGRESS_ALLOW.*port must be from 1 to 65535/],
    ['a metrics token with a space', ['--metrics-token', 'two words'], {}, /--metrics-token must be 1–1024 visible ASCII/],
    ['an empty metrics token in the environment', [], { RUNLOOM_METRICS_TOKEN: '' }, /^RUNLOOM_METRICS_TOKEN must be/],
    ['a database URL that is not PostgreSQL', ['--database-url', 'mysql://x'], {}, /postgres:\/\//],
    ['a boolean variable that is not one', [], { RUNLOOM_ALLOW_PRIVATE_NETWORK: 'maybe' }, /RUNLOOM_ALLOW_PRIVATE_NETWORK must be true or false/],
    ['a blob store URL that is not s3://', ['--blob-store', 'gs://bucket/prefix'], {}, /^--blob-store must be a folder path or an s3:\/\/bucket\/prefix URL/],
    ['an S3 bucket name S3 refuses', ['--blob-store', 's3://Bucket_1/p'], {}, /^--blob-store must name a bucket of 3–63 lowercase letters/],
    ['an S3 prefix with a .. segment', ['--blob-store', 's3://bucket/a/../b'], {}, /^--blob-store has a prefix segment '\.\.'/],
    ['an S3 endpoint without an s3:// blob store', ['--s3-endpoint', 'https://s3.example.com'], {}, /^--s3-endpoint needs --blob-store s3:\/\/BUCKET\/PREFIX/],
    ['an S3 endpoint beside a local blob folder', ['--s3-endpoint', 'https://s3.example.com', '--blob-store', '/tmp/b'], {}, /^--s3-endpoint needs --blob-store/],
    ['an S3 endpoint that is not an http(s) URL', ['--blob-store', 's3://bucket'], { RUNLOOM_S3_ENDPOINT: 'minio:9000' }, /^RUNLOOM_S3_ENDPOINT must be an http:\/\/ or https:\/\/ URL/],
  ];
  for (const [what, args, env, message] of refused) {
    it(`refuses ${what} with a UsageError saying what to fix`, () => {
      assert.throws(() => parseServeOptions(args, env), (error: unknown) => error instanceof UsageError && message.test(error.message));
    });
  }

  it('never repeats a secret in its error', () => {
    for (const [args, env, secret] of [
      [['--bootstrap-client', 'acct-a::super-secret'], {}, 'super-secret'],
      [[], { RUNLOOM_BOOTSTRAP_CLIENTS: 'acct-a::env-secret' }, 'env-secret'],
      [['--secret-key', 'c2hvcnQtc2VjcmV0'], {}, 'c2hvcnQtc2VjcmV0'],
      [['--metrics-token', 'has a space'], {}, 'has a space'],
      [['--blob-store', 's3://b1', '--s3-endpoint', 'http://minio:hunter2@127.0.0.1:9000'], {}, 'hunter2'],
    ] as Array<[string[], Record<string, string>, string]>) {
      assert.throws(
        () => parseServeOptions(args, env),
        (error: unknown) => error instanceof UsageError && !error.message.includes(secret),
      );
    }
  });

  it('answers -h like --help', () => {
    assert.equal(parseServeOptions(['-h'], {}), undefined);
    assert.match(SERVE_USAGE, /--token-ttl-seconds N\n.*\(default 3600\) \[RUNLOOM_TOKEN_TTL_SECONDS\]/);
  });

  it('accepts every flag its help shows, and each one reaches the options', () => {
    // A value each flag accepts, and where it lands; a flag added to the table needs a line here.
    const samples: Record<string, [string[], (options: NonNullable<ReturnType<typeof parseServeOptions>>) => unknown, unknown]> = {
      '--host': [['::1'], (o) => o.host, '::1'],
      '--port': [['0'], (o) => o.port, 0],
      '--data-dir': [['/tmp/sample-dir'], (o) => o.runloom.dataDir, '/tmp/sample-dir'],
      '--database-url': [['postgres://db/x'], (o) => o.runloom.databaseUrl, 'postgres://db/x'],
      '--bootstrap-client': [['a:b:c'], (o) => o.runloom.bootstrapClients, ['a:b:c']],
      '--allow-private-network': [[], (o) => o.runloom.allowPrivateNetwork, true],
      '--enable-shell-commands': [[], (o) => o.runloom.shellCommands, true],
      '--egress-allow': [['llm.lan:8000'], (o) => o.runloom.egressAllow, ['llm.lan:8000']],
      '--base-path': [['/x'], (o) => o.runloom.basePath, '/x'],
      '--token-ttl-seconds': [['5'], (o) => o.runloom.tokenTtlSeconds, 5],
      '--rate-limit': [['2.5'], (o) => o.runloom.rateLimit, 2.5],
      '--callback-max-attempts': [['2'], (o) => o.runloom.callbackMaxAttempts, 2],
      '--callback-initial-backoff-ms': [['0'], (o) => o.runloom.callbackInitialBackoffMs, 0],
      '--json-body-limit-bytes': [['10'], (o) => o.runloom.jsonBodyLimitBytes, 10],
      '--upload-limit-bytes': [['11'], (o) => o.runloom.uploadLimitBytes, 11],
      '--run-concurrency': [['3'], (o) => o.runloom.runConcurrency, 3],
      '--run-concurrency-per-account': [['1'], (o) => o.runloom.runConcurrencyPerAccount, 1],
      '--thread-stream-idle-timeout-ms': [['5000'], (o) => o.runloom.threadStreamIdleTimeoutMs, 5000],
      '--workspaces-dir': [['/tmp/sample-workspaces'], (o) => o.runloom.workspacesDir, '/tmp/sample-workspaces'],
      '--blob-store': [['/tmp/sample-blobs'], (o) => o.runloom.blobStore, '/tmp/sample-blobs'],
      '--s3-endpoint': [['https://minio.lan:9000'], (o) => o.runloom.s3Endpoint, 'https://minio.lan:9000'],
      '--secret-key': [[KEY], (o) => o.runloom.secretKey, KEY],
      '--metrics-token': [['m-token'], (o) => o.runloom.metricsToken, 'm-token'],
    };
    const shown = [...SERVE_USAGE.matchAll(/^ {2}--([a-z0-9-]+)/gm)].map((match) => `--${match[1]}`).filter((flag) => flag !== '--help');
    assert.deepEqual(shown.sort(), Object.keys(samples).sort(), 'the help and the samples list different flags');
    for (const flag of shown) {
      const [value, read, expected] = samples[flag]!;
      // The endpoint serves an S3 blob store: given beside one.
      const context: Record<string, string> = flag === '--s3-endpoint' ? { RUNLOOM_BLOB_STORE: 's3://bucket/prefix' } : {};
      assert.deepEqual(read(parseServeOptions([flag, ...value], context)!), expected, flag);
      const variable = `RUNLOOM_${flag.slice(2).toUpperCase().replace(/-/g, '_')}`;
      const fromEnv = flag === '--bootstrap-client' ? 'RUNLOOM_BOOTSTRAP_CLIENTS' : variable;
      assert.ok(SERVE_USAGE.includes(`[${fromEnv}`), `${flag} does not name ${fromEnv}`);
      assert.deepEqual(read(parseServeOptions([], { ...context, [fromEnv]: value[0] ?? 'true' })!), expected, fromEnv);
    }
  });

  describe('an unusable data dir', () => {
    let scratch: string;
    beforeEach(() => {
      scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-cli-'));
    });
    afterEach(() => fs.rmSync(scratch, { recursive: true, force: true }));

    it('refuses a file, or a path under one, naming the flag or the variable, creating nothing', () => {
      const file = path.join(scratch, 'a-file');
      fs.writeFileSync(file, '');
      const refused = (parse: () => unknown, message: string): void => {
        assert.throws(parse, (error: unknown) => error instanceof UsageError && error.message === message);
      };
      refused(() => parseServeOptions(['--data-dir', file], {}), `--data-dir must be a folder, not a file, got '${file}'`);
      refused(() => parseServeOptions([], { RUNLOOM_DATA_DIR: file }), `RUNLOOM_DATA_DIR must be a folder, not a file, got '${file}'`);
      const under = path.join(file, 'sub', 'dir');
      refused(() => parseClientCreateOptions(['--account', 'a', '--data-dir', under], {}), `--data-dir cannot be created: ${file} is a file, got '${under}'`);
      assert.deepEqual(fs.readdirSync(scratch), ['a-file']);
    });

    it('accepts a folder that does not exist yet under a writable one', () => {
      const dir = path.join(scratch, 'new', 'data');
      assert.equal(parseServeOptions(['--data-dir', dir], {})?.runloom.dataDir, dir);
      assert.equal(fs.existsSync(path.join(scratch, 'new')), false);
    });

    it('refuses a folder this user cannot write to', function () {
      if (process.getuid?.() === 0) this.skip(); // root writes everywhere
      const locked = path.join(scratch, 'locked');
      fs.mkdirSync(locked, { mode: 0o500 });
      assert.match(dataDirProblem(locked)!, /must be a folder this user can write to/);
      assert.match(dataDirProblem(path.join(locked, 'sub'))!, /cannot be created: .*locked is not writable/);
    });
  });
});

describe('runloom client create options', () => {
  it('requires --account and takes the store from flags or the environment', () => {
    assert.throws(() => parseClientCreateOptions([], {}), /--account is required/);
    assert.deepEqual(parseClientCreateOptions(['--account', 'acct-a'], { RUNLOOM_DATA_DIR: '/tmp/env-dir' }), {
      account: 'acct-a',
      runloom: { dataDir: '/tmp/env-dir', databaseUrl: undefined, secretKey: undefined },
    });
    assert.equal(parseClientCreateOptions(['--account', 'a', '--data-dir', '/tmp/flag'], { RUNLOOM_DATA_DIR: '/tmp/env' })?.runloom.dataDir, '/tmp/flag');
  });

  it('has a help of its own that says what to do when a server holds the data dir', () => {
    assert.equal(parseClientCreateOptions(['--help'], {}), undefined);
    for (const flag of ['--account ACCOUNT', '--data-dir DIR', '--database-url URL', '[RUNLOOM_DATA_DIR]', '--bootstrap-client']) {
      assert.ok(CLIENT_CREATE_USAGE.includes(flag), flag);
    }
    assert.ok(!CLIENT_CREATE_USAGE.includes('--port'));
    assert.throws(() => parseClientCreateOptions(['--account', 'a', '--port', '1'], {}), /Unknown option '--port'/);
    assert.ok(CLIENT_CREATE_USAGE.includes('--secret-key BASE64'));
  });

  it("takes the server's key from --secret-key over RUNLOOM_SECRET_KEY, and refuses one that is not 32 bytes of base64", () => {
    const [flag, env] = [Buffer.alloc(32, 1).toString('base64'), Buffer.alloc(32, 2).toString('base64')];
    const key = (args: string[], variables: Record<string, string>) => parseClientCreateOptions(['--account', 'a', ...args], variables)?.runloom.secretKey;
    assert.equal(key(['--secret-key', flag], { RUNLOOM_SECRET_KEY: env }), flag);
    assert.equal(key([], { RUNLOOM_SECRET_KEY: env }), env);
    assert.throws(() => key(['--secret-key', 'c2hvcnQ='], {}), /--secret-key must be 32 bytes in base64/);
  });
});
