import path from 'node:path';
import { parseArgs } from 'node:util';
import { parseBootstrapClients, type CreateRunloomOptions } from '../../core/src/index';

/** A command line the user must fix: the CLI prints the message and exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

type Env = Record<string, string | undefined>;

interface FlagSpec {
  type: 'string' | 'boolean';
  multiple?: boolean;
  /** Shown in `--help` after the flag name. */
  value?: string;
  help: string;
  /** Has no `RUNLOOM_*` counterpart. */
  noEnv?: boolean;
}

/** Every flag of `runloom serve` (DESIGN 2.1 and 2.8); each is also `RUNLOOM_<FLAG>` in the environment. */
const SERVE_FLAGS = {
  host: { type: 'string', value: 'HOST', help: 'interface to listen on (default 127.0.0.1)' },
  port: { type: 'string', value: 'PORT', help: 'port to listen on; 0 picks a free one (default 8787)' },
  'data-dir': { type: 'string', value: 'DIR', help: 'folder of the embedded store, blobs and keys (default ./.runloom-data)' },
  'database-url': { type: 'string', value: 'URL', help: 'a postgres:// URL selects PostgreSQL (default: sql.js file in the data dir)' },
  'bootstrap-client': {
    type: 'string',
    multiple: true,
    value: 'ACCOUNT:CLIENT_ID:SECRET',
    help: 'create or update this client at start; repeatable',
  },
  'allow-private-network': { type: 'boolean', help: 'let callbacks and provider base_urls reach loopback/private addresses' },
  'base-path': { type: 'string', value: 'PATH', help: 'prefix of every route, e.g. /api (default none)' },
  'token-ttl-seconds': { type: 'string', value: 'N', help: 'lifetime of access tokens (default 3600)' },
  'callback-max-attempts': { type: 'string', value: 'N', help: 'deliveries of a run callback before it fails (default 8)' },
  'callback-initial-backoff-ms': { type: 'string', value: 'MS', help: 'first callback retry delay; doubles, capped at 10 minutes (default 1000)' },
  'rate-limit': { type: 'string', value: 'N', help: 'requests/s per account, bursts of 2×N; 0 turns it off (default 1000)' },
  'json-body-limit-bytes': { type: 'string', value: 'N', help: 'largest JSON request body; larger ones get 413 (default 1048576)' },
  'upload-limit-bytes': { type: 'string', value: 'N', help: 'largest resource upload; larger ones get 413 (default 1073741824)' },
  'run-concurrency': { type: 'string', value: 'N', help: 'runs executing at once on this server (default 32)' },
  'run-concurrency-per-account': { type: 'string', value: 'N', help: 'runs of one account executing at once (default 8)' },
  'secret-key': { type: 'string', value: 'BASE64', help: '32-byte key for encryption and URL signing (default: generated into the data dir)' },
  'blob-store': { type: 'string', value: 'DIR', help: 'folder of resource bytes (default: blobs/ in the data dir)' },
  's3-endpoint': { type: 'string', value: 'URL', help: 'endpoint of an S3-compatible blob store' },
  help: { type: 'boolean', help: 'show this help', noEnv: true },
} as const satisfies Record<string, FlagSpec>;

const CLIENT_CREATE_FLAGS = {
  account: { type: 'string', value: 'ACCOUNT', help: 'account the new client belongs to (required)', noEnv: true },
  'data-dir': SERVE_FLAGS['data-dir'],
  'database-url': SERVE_FLAGS['database-url'],
  'secret-key': {
    type: 'string',
    value: 'BASE64',
    help: "the server's key; with --database-url, needed unless --data-dir holds the server's secret.key",
  },
  help: { type: 'boolean', help: 'show this help', noEnv: true },
} as const satisfies Record<string, FlagSpec>;

export interface ServeOptions {
  host: string;
  port: number;
  /** Folder of resource bytes when not the data dir's `blobs/`. */
  blobStore?: string;
  runloom: CreateRunloomOptions & { dataDir: string };
}

export interface ClientCreateOptions {
  account: string;
  runloom: CreateRunloomOptions & { dataDir: string };
}

export const SERVE_USAGE = usage('runloom serve [options]', 'Starts the Runloom HTTP server.', SERVE_FLAGS);
export const CLIENT_CREATE_USAGE = usage(
  'runloom client create --account ACCOUNT [--data-dir DIR | --database-url URL [--secret-key BASE64]]',
  'Creates a service-account client and prints its client_id and client_secret (shown once).',
  CLIENT_CREATE_FLAGS,
);

/** `runloom serve` flags over `RUNLOOM_*` variables over defaults; undefined means `--help`. */
export function parseServeOptions(args: string[], env: Env): ServeOptions | undefined {
  const values = parseFlags(args, SERVE_FLAGS);
  if (values.help) return undefined;
  const pick = (flag: keyof typeof SERVE_FLAGS): string | undefined => {
    const value = values[flag];
    return typeof value === 'string' ? value : env[envName(flag)];
  };

  const bootstrapEntries = [
    ...listFromEnv(env.RUNLOOM_BOOTSTRAP_CLIENTS),
    ...listFromEnv(env.RUNLOOM_BOOTSTRAP_CLIENT),
    // Flags come last so a flag's secret wins over the environment's for the same client.
    ...(values['bootstrap-client'] ?? []),
  ];
  try {
    parseBootstrapClients(bootstrapEntries);
  } catch (error) {
    throw new UsageError(`--bootstrap-client: ${(error as Error).message}`);
  }

  const blobStore = pick('blob-store');
  if (blobStore !== undefined && /^[a-z][a-z0-9+.-]*:\/\//i.test(blobStore)) {
    throw new UsageError(`--blob-store: only a local folder is supported by this build, not '${blobStore.split('://')[0]}://'`);
  }
  if (pick('s3-endpoint') !== undefined) {
    throw new UsageError('--s3-endpoint: S3-compatible blob stores are not supported by this build; use a local --blob-store folder');
  }

  return {
    host: nonEmpty('host', pick('host')) ?? '127.0.0.1',
    port: integer('port', pick('port'), 0, 65535) ?? 8787,
    blobStore: blobStore === undefined ? undefined : path.resolve(nonEmpty('blob-store', blobStore)!),
    runloom: {
      dataDir: path.resolve(nonEmpty('data-dir', pick('data-dir')) ?? './.runloom-data'),
      databaseUrl: databaseUrl(pick('database-url')),
      bootstrapClients: bootstrapEntries,
      allowPrivateNetwork: values['allow-private-network'] ?? boolean('allow-private-network', env.RUNLOOM_ALLOW_PRIVATE_NETWORK),
      basePath: basePath(pick('base-path')),
      tokenTtlSeconds: integer('token-ttl-seconds', pick('token-ttl-seconds'), 1),
      callbackMaxAttempts: integer('callback-max-attempts', pick('callback-max-attempts'), 1),
      callbackInitialBackoffMs: integer('callback-initial-backoff-ms', pick('callback-initial-backoff-ms'), 0),
      rateLimit: nonNegativeNumber('rate-limit', pick('rate-limit')),
      jsonBodyLimitBytes: integer('json-body-limit-bytes', pick('json-body-limit-bytes'), 1),
      uploadLimitBytes: integer('upload-limit-bytes', pick('upload-limit-bytes'), 1),
      runConcurrency: integer('run-concurrency', pick('run-concurrency'), 1),
      runConcurrencyPerAccount: integer('run-concurrency-per-account', pick('run-concurrency-per-account'), 1),
      secretKey: secretKey(pick('secret-key')),
    },
  };
}

/** `runloom client create` options; undefined means `--help`. */
export function parseClientCreateOptions(args: string[], env: Env): ClientCreateOptions | undefined {
  const values = parseFlags(args, CLIENT_CREATE_FLAGS);
  if (values.help) return undefined;
  const account = nonEmpty('account', values.account);
  if (account === undefined) throw new UsageError('--account is required: the account the new client belongs to');
  return {
    account,
    runloom: {
      dataDir: path.resolve(nonEmpty('data-dir', values['data-dir'] ?? env.RUNLOOM_DATA_DIR) ?? './.runloom-data'),
      databaseUrl: databaseUrl(values['database-url'] ?? env.RUNLOOM_DATABASE_URL),
      secretKey: secretKey(values['secret-key'] ?? env.RUNLOOM_SECRET_KEY),
    },
  };
}

function parseFlags<T extends Record<string, FlagSpec>>(args: string[], flags: T) {
  try {
    return parseArgs({ args, options: flags, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function envName(flag: string): string {
  return `RUNLOOM_${flag.toUpperCase().replace(/-/g, '_')}`;
}

function listFromEnv(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
}

function nonEmpty(flag: string, value: string | undefined): string | undefined {
  if (value !== undefined && value.trim() === '') throw new UsageError(`--${flag} must not be empty`);
  return value;
}

function integer(flag: string, value: string | undefined, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined) return undefined;
  const parsed = /^\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(parsed) || parsed < min || parsed > max) {
    throw new UsageError(`--${flag} must be a whole number from ${min} to ${max}, got '${value}'`);
  }
  return parsed;
}

function nonNegativeNumber(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parsed = value.trim() === '' ? Number.NaN : Number(value);
  if (!Number.isFinite(parsed) || parsed < 0) throw new UsageError(`--${flag} must be a number ≥ 0, got '${value}'`);
  return parsed;
}

function boolean(flag: string, value: string | undefined): boolean | undefined {
  if (value === undefined || value === '') return undefined;
  if (/^(1|true|yes|on)$/i.test(value)) return true;
  if (/^(0|false|no|off)$/i.test(value)) return false;
  throw new UsageError(`${envName(flag)} must be true or false, got '${value}'`);
}

function databaseUrl(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^postgres(ql)?:\/\//i.test(value)) {
    throw new UsageError("--database-url must be a postgres:// URL (leave it out for the embedded sql.js store)");
  }
  return value;
}

/** '/api/' → '/api'; '/' or '' → no prefix. */
function basePath(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim().replace(/\/+$/, '');
  if (trimmed === '') return '';
  if (!/^(\/[\w.~-]+)+$/.test(trimmed)) {
    throw new UsageError(`--base-path must look like /prefix or /a/b (letters, digits, . _ ~ -), got '${value}'`);
  }
  return trimmed;
}

function secretKey(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(value) || Buffer.from(value, 'base64').length !== 32) {
    throw new UsageError('--secret-key must be 32 bytes in base64 (e.g. `openssl rand -base64 32`)');
  }
  return value;
}

function usage(synopsis: string, summary: string, flags: Record<string, FlagSpec>): string {
  const rows = Object.entries(flags).map(([name, spec]) => {
    const env = spec.noEnv ? '' : ` [${name === 'bootstrap-client' ? 'RUNLOOM_BOOTSTRAP_CLIENTS, comma-separated' : envName(name)}]`;
    return `  --${name}${spec.value ? ` ${spec.value}` : ''}\n      ${spec.help}${env}`;
  });
  return `Usage: ${synopsis}\n\n${summary}\n\nOptions (environment variable in brackets; flags win over it):\n${rows.join('\n')}\n`;
}
