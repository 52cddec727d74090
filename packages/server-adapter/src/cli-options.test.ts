import assert from 'node:assert/strict';
import path from 'node:path';
import { parseClientCreateOptions, parseServeOptions, SERVE_USAGE, UsageError } from './cli-options';

const KEY = Buffer.alloc(32, 7).toString('base64');

describe('runloom serve options', () => {
  it('defaults to 127.0.0.1:8787 and ./.runloom-data, leaving the rest to the core defaults', () => {
    assert.deepEqual(parseServeOptions([], {}), {
      host: '127.0.0.1',
      port: 8787,
      blobStore: undefined,
      runloom: {
        dataDir: path.resolve('.runloom-data'),
        databaseUrl: undefined,
        bootstrapClients: [],
        allowPrivateNetwork: undefined,
        basePath: undefined,
        tokenTtlSeconds: undefined,
        callbackMaxAttempts: undefined,
        callbackInitialBackoffMs: undefined,
        rateLimit: undefined,
        jsonBodyLimitBytes: undefined,
        uploadLimitBytes: undefined,
        runConcurrency: undefined,
        runConcurrencyPerAccount: undefined,
        secretKey: undefined,
      },
    });
  });

  it('reads every flag of DESIGN 2.1', () => {
    const options = parseServeOptions(
      [
        '--host', '0.0.0.0', '--port', '0', '--data-dir', '/tmp/d', '--database-url', 'postgres://u@db/x',
        '--bootstrap-client', 'acct-a:c1:s:with:colons', '--bootstrap-client', 'acct-b:c2:s2', '--allow-private-network',
        '--base-path', '/api/', '--token-ttl-seconds', '60', '--callback-max-attempts', '3',
        '--callback-initial-backoff-ms', '10', '--rate-limit', '0', '--secret-key', KEY, '--blob-store', '/tmp/blobs',
        '--json-body-limit-bytes', '2048', '--upload-limit-bytes', '4096', '--run-concurrency', '4', '--run-concurrency-per-account', '2',
      ],
      {},
    );
    assert.deepEqual(options, {
      host: '0.0.0.0',
      port: 0,
      blobStore: '/tmp/blobs',
      runloom: {
        dataDir: '/tmp/d',
        databaseUrl: 'postgres://u@db/x',
        bootstrapClients: ['acct-a:c1:s:with:colons', 'acct-b:c2:s2'],
        allowPrivateNetwork: true,
        basePath: '/api',
        tokenTtlSeconds: 60,
        callbackMaxAttempts: 3,
        callbackInitialBackoffMs: 10,
        rateLimit: 0,
        jsonBodyLimitBytes: 2048,
        uploadLimitBytes: 4096,
        runConcurrency: 4,
        runConcurrencyPerAccount: 2,
        secretKey: KEY,
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
    };
    const options = parseServeOptions(['--port', '0', '--bootstrap-client', 'acct-a:c1:flag-secret'], env)!;
    assert.equal(options.host, '::1');
    assert.equal(options.port, 0);
    assert.equal(options.runloom.tokenTtlSeconds, 120);
    assert.equal(options.runloom.allowPrivateNetwork, true);
    assert.equal(options.runloom.basePath, '/env');
    // Upserted in order, so the flag's secret is the one c1 ends with.
    assert.deepEqual(options.runloom.bootstrapClients, ['acct-a:c1:env-secret', 'acct-b:c2:s2', 'acct-a:c1:flag-secret']);
  });

  it('answers --help with undefined and documents every flag with its variable', () => {
    assert.equal(parseServeOptions(['--help'], {}), undefined);
    for (const flag of ['--host', '--port', '--data-dir', '--database-url', '--bootstrap-client', '--allow-private-network', '--base-path',
      '--token-ttl-seconds', '--callback-max-attempts', '--callback-initial-backoff-ms', '--rate-limit', '--secret-key', '--blob-store',
      '--json-body-limit-bytes', '--upload-limit-bytes', '--run-concurrency', '--run-concurrency-per-account']) {
      assert.ok(SERVE_USAGE.includes(flag), flag);
    }
    assert.ok(SERVE_USAGE.includes('RUNLOOM_BOOTSTRAP_CLIENTS'));
    assert.ok(SERVE_USAGE.includes('RUNLOOM_CALLBACK_INITIAL_BACKOFF_MS'));
  });

  const refused: Array<[string, string[], Record<string, string>, RegExp]> = [
    ['an unknown flag', ['--no-such-flag'], {}, /Unknown option '--no-such-flag'/],
    ['a flag without its value', ['--port'], {}, /--port/],
    ['a positional argument', ['extra'], {}, /Unexpected argument 'extra'/],
    ['a port that is not a number', ['--port', 'http'], {}, /--port must be a whole number from 0 to 65535/],
    ['a port out of range', ['--port', '70000'], {}, /--port must be/],
    ['a bad port in the environment', [], { RUNLOOM_PORT: '-1' }, /--port must be/],
    ['a zero token lifetime', ['--token-ttl-seconds', '0'], {}, /--token-ttl-seconds must be a whole number from 1/],
    ['a negative rate limit', ['--rate-limit=-5'], {}, /--rate-limit must be a number ≥ 0/],
    ['a malformed bootstrap client', ['--bootstrap-client', 'acct-a:only-id'], {}, /ACCOUNT:CLIENT_ID:SECRET/],
    ['a base path without a leading slash', ['--base-path', 'api'], {}, /--base-path must look like \/prefix/],
    ['a secret key of the wrong size', ['--secret-key', Buffer.alloc(16).toString('base64')], {}, /32 bytes in base64/],
    ['a database URL that is not PostgreSQL', ['--database-url', 'mysql://x'], {}, /postgres:\/\//],
    ['a boolean variable that is not one', [], { RUNLOOM_ALLOW_PRIVATE_NETWORK: 'maybe' }, /RUNLOOM_ALLOW_PRIVATE_NETWORK must be true or false/],
    ['an S3 blob store, which this build lacks', ['--blob-store', 's3://bucket/prefix'], {}, /only a local folder/],
  ];
  for (const [what, args, env, message] of refused) {
    it(`refuses ${what} with a UsageError saying what to fix`, () => {
      assert.throws(() => parseServeOptions(args, env), (error: unknown) => error instanceof UsageError && message.test(error.message));
    });
  }

  it('never repeats a bootstrap secret in its error', () => {
    assert.throws(
      () => parseServeOptions(['--bootstrap-client', 'acct-a::super-secret'], {}),
      (error: unknown) => error instanceof UsageError && !error.message.includes('super-secret'),
    );
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

  it("takes the server's key from --secret-key over RUNLOOM_SECRET_KEY, and refuses one that is not 32 bytes of base64", () => {
    const [flag, env] = [Buffer.alloc(32, 1).toString('base64'), Buffer.alloc(32, 2).toString('base64')];
    const key = (args: string[], variables: Record<string, string>) => parseClientCreateOptions(['--account', 'a', ...args], variables)?.runloom.secretKey;
    assert.equal(key(['--secret-key', flag], { RUNLOOM_SECRET_KEY: env }), flag);
    assert.equal(key([], { RUNLOOM_SECRET_KEY: env }), env);
    assert.throws(() => key(['--secret-key', 'c2hvcnQ='], {}), /--secret-key must be 32 bytes in base64/);
  });
});
