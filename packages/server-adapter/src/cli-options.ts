import { accessSync, constants, statSync, type Stats } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { defaultConfig, parseBootstrapClients, type CreateRunloomOptions, type RunloomConfig } from '@runloom/core';
import { blobStoreProblem, checkS3Endpoint, isS3Url, parseEgressAllow } from '@runloom/core/node';

/**
 * A command line the user must fix: the CLI prints the message and exits 2, with a pointer to
 * `--help` when `showHelp` (an unknown command or flag; a bad value's message says what to fix).
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';

  constructor(
    message: string,
    readonly showHelp = true,
  ) {
    super(message);
  }
}

type Env = Record<string, string | undefined>;
export type Command = 'serve' | 'client create';

/**
 * One row per flag: everything the CLI knows about it. The flag is `--<key>`; it is read from the
 * command line, else from its environment variables, else from `default`. The raw text goes
 * through `check`, and the result to `createRunloom`'s option `option` (or the command's own
 * options, under `own`). Help and error messages are generated from the row.
 */
interface FlagRow {
  commands: readonly Command[];
  /** Placeholder of the value in `--help`; absent for a switch (`--flag` alone means true). */
  value?: string;
  help: string;
  /** The text `--help` shows as the default; taken from the core's `defaultConfig` when omitted. */
  shownDefault?: string;
  /** Applied when neither the flag nor the environment gives a value. */
  default?: string;
  /** Repeatable: environment entries (comma-separated) come first, then each flag's. */
  repeatable?: boolean;
  /** Its environment variables; `RUNLOOM_<FLAG>` unless given, none for `[]`. */
  env?: readonly string[];
  /** Its value is a credential: an error never repeats it. */
  secret?: boolean;
  /**
   * Checks and converts the raw text (a list of texts when repeatable), throwing a `FlagProblem`.
   * Plain code rather than zod: the first zod schema of each kind a process makes costs zod's
   * set-up of that kind, which the flags every start gives made part of every start.
   */
  check: (raw: string & string[]) => unknown;
  /** Where the value goes. */
  to: { option: keyof RunloomConfig } | { own: string };
}

/** What is wrong with a flag's value; `index` names the entry of a repeatable flag. */
class FlagProblem {
  constructor(
    readonly message: string,
    readonly index?: number,
  ) {}
}

function refuse(message: string, index?: number): never {
  throw new FlagProblem(message, index);
}

/** Runs a parser of the core that throws what is wrong, its message the flag's problem. */
function refuseThrown(parse: () => unknown): void {
  try {
    parse();
  } catch (error) {
    refuse((error as Error).message);
  }
}

// What a check says starts with the flag's name: `--port must be …`, `RUNLOOM_PORT must be …`.
function text(raw: string): string {
  const value = raw.trim();
  return value === '' ? refuse('must not be empty') : value;
}

function wholeNumber(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (raw: string): number => {
    const value = Number(raw);
    const whole = /^\s*\d+\s*$/.test(raw) && Number.isSafeInteger(value) && value >= min && value <= max;
    return whole ? value : refuse(`must be a whole number from ${min} to ${max}`);
  };
}

function nonNegativeNumber(raw: string): number {
  const value = Number(raw);
  return raw.trim() !== '' && Number.isFinite(value) && value >= 0 ? value : refuse('must be a number ≥ 0');
}

/** `--flag` alone is 'true'; a variable says true/false, 1/0, yes/no or on/off; empty is unset. */
function onOff(raw: string): boolean | undefined {
  if (!/^(1|true|yes|on|0|false|no|off|)$/i.test(raw)) refuse('must be true or false');
  return raw === '' ? undefined : /^(1|true|yes|on)$/i.test(raw);
}

function postgresUrl(raw: string): string | undefined {
  if (raw !== '' && !/^postgres(ql)?:\/\//i.test(raw)) refuse('must be a postgres:// URL (leave it out for the embedded sql.js store)');
  return raw === '' ? undefined : raw;
}

/** The data dir, resolved; refused when it cannot be a folder this process writes to. */
function dataDir(raw: string): string {
  const dir = path.resolve(text(raw));
  const problem = dataDirProblem(dir);
  return problem === undefined ? dir : refuse(problem);
}

const FLAGS = {
  account: {
    commands: ['client create'],
    value: 'ACCOUNT',
    help: 'account the new client belongs to (required)',
    env: [],
    check: text,
    to: { own: 'account' },
  },
  host: {
    commands: ['serve'],
    value: 'HOST',
    help: 'interface to listen on',
    default: '127.0.0.1',
    check: text,
    to: { own: 'host' },
  },
  port: {
    commands: ['serve'],
    value: 'PORT',
    help: 'port to listen on; 0 picks a free one',
    default: '8787',
    check: wholeNumber(0, 65535),
    to: { own: 'port' },
  },
  'data-dir': {
    commands: ['serve', 'client create'],
    value: 'DIR',
    help: 'folder of the embedded store, blobs and keys',
    default: './.runloom-data',
    check: dataDir,
    to: { option: 'dataDir' },
  },
  'database-url': {
    commands: ['serve', 'client create'],
    value: 'URL',
    help: 'a postgres:// URL selects PostgreSQL for records and the job queue',
    shownDefault: 'sql.js in the data dir',
    check: postgresUrl,
    to: { option: 'databaseUrl' },
  },
  'bootstrap-client': {
    commands: ['serve'],
    value: 'ACCOUNT:CLIENT_ID:SECRET',
    help: 'create or update this client at start; repeatable',
    shownDefault: 'none',
    repeatable: true,
    env: ['RUNLOOM_BOOTSTRAP_CLIENTS', 'RUNLOOM_BOOTSTRAP_CLIENT'],
    secret: true,
    check: (entries) => {
      entries.forEach((entry, index) => {
        try {
          parseBootstrapClients([entry]);
        } catch {
          refuse('must be ACCOUNT:CLIENT_ID:SECRET with none of the three empty', index);
        }
      });
      return entries;
    },
    to: { option: 'bootstrapClients' },
  },
  'allow-private-network': {
    commands: ['serve'],
    help: 'let every outbound request (model vendors and their base_urls, callbacks, agent HTTP tools, git remotes) reach loopback, private, link-local and metadata addresses',
    shownDefault: 'off',
    check: onOff,
    to: { option: 'allowPrivateNetwork' },
  },
  'enable-shell-commands': {
    commands: ['serve'],
    help: "let workspace commands of type shell run programs on this machine, in the workspace's folder (argv only, never through a shell); any account can then run anything the server's user can",
    shownDefault: 'off: shell commands answer 403',
    check: onOff,
    to: { option: 'shellCommands' },
  },
  'egress-allow': {
    commands: ['serve'],
    value: 'HOST[:PORT]',
    help: 'let outbound requests reach this one destination although it is not public, e.g. a self-hosted vendor at llm.lan:8000 or 10.0.0.7:11434 (no port: every port); repeatable',
    shownDefault: 'none',
    repeatable: true,
    check: (entries) => {
      refuseThrown(() => parseEgressAllow(entries));
      return entries;
    },
    to: { option: 'egressAllow' },
  },
  'base-path': {
    commands: ['serve'],
    value: 'PATH',
    help: 'prefix of every route, e.g. /api',
    shownDefault: 'none',
    // '/api/' → '/api'; '/' or '' → no prefix.
    check: (raw) => {
      const value = raw.trim().replace(/\/+$/, '');
      return value === '' || /^(\/[\w.~-]+)+$/.test(value) ? value : refuse('must look like /prefix or /a/b (letters, digits, . _ ~ -)');
    },
    to: { option: 'basePath' },
  },
  'token-ttl-seconds': {
    commands: ['serve'],
    value: 'N',
    help: 'lifetime of access tokens',
    check: wholeNumber(1),
    to: { option: 'tokenTtlSeconds' },
  },
  'rate-limit': {
    commands: ['serve'],
    value: 'N',
    help: 'requests/s per account, bursts of 2×N; 0 turns it off',
    check: nonNegativeNumber,
    to: { option: 'rateLimit' },
  },
  'callback-max-attempts': {
    commands: ['serve'],
    value: 'N',
    help: 'deliveries of a run callback before it fails',
    check: wholeNumber(1),
    to: { option: 'callbackMaxAttempts' },
  },
  'callback-initial-backoff-ms': {
    commands: ['serve'],
    value: 'MS',
    help: 'first callback retry delay; doubles, capped at 10 minutes, ±20% jitter',
    check: wholeNumber(0),
    to: { option: 'callbackInitialBackoffMs' },
  },
  'json-body-limit-bytes': {
    commands: ['serve'],
    value: 'N',
    help: 'largest JSON request body; larger ones get 413',
    check: wholeNumber(1),
    to: { option: 'jsonBodyLimitBytes' },
  },
  'upload-limit-bytes': {
    commands: ['serve'],
    value: 'N',
    help: 'largest resource upload; larger ones get 413',
    check: wholeNumber(1),
    to: { option: 'uploadLimitBytes' },
  },
  'run-concurrency': {
    commands: ['serve'],
    value: 'N',
    help: 'upper bound of runs in flight on this server, waiting on a vendor included; bounds memory',
    check: wholeNumber(1),
    to: { option: 'runConcurrency' },
  },
  'run-concurrency-per-account': {
    commands: ['serve'],
    value: 'N',
    help: 'upper bound of one account’s runs in flight at once on this server',
    check: wholeNumber(1),
    to: { option: 'runConcurrencyPerAccount' },
  },
  'thread-stream-idle-timeout-ms': {
    commands: ['serve'],
    value: 'N',
    help: 'a thread reply whose model sends nothing for this long is ended (its partial reply kept)',
    check: wholeNumber(1),
    to: { option: 'threadStreamIdleTimeoutMs' },
  },
  'workspaces-dir': {
    commands: ['serve'],
    value: 'DIR',
    help: 'folder holding one folder of files per workspace (a shared volume, say)',
    shownDefault: 'workspaces/ in the data dir',
    check: dataDir,
    to: { option: 'workspacesDir' },
  },
  'blob-store': {
    commands: ['serve'],
    value: 'DIR|s3://BUCKET/PREFIX',
    help: 'where resource bytes live: a local folder, or an S3-compatible bucket that several instances share (credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, region from AWS_REGION)',
    shownDefault: 'blobs/ in the data dir',
    check: (raw) => {
      const value = text(raw);
      const problem = blobStoreProblem(value);
      if (problem !== undefined) refuse(problem);
      return isS3Url(value) ? value : path.resolve(value);
    },
    to: { option: 'blobStore' },
  },
  'secret-key': {
    commands: ['serve', 'client create'],
    value: 'BASE64',
    help: "32-byte key for encryption and URL signing; share it between instances. client create with --database-url needs the server's key, unless --data-dir holds its secret.key",
    shownDefault: 'generated into the data dir',
    secret: true,
    check: (raw) =>
      /^[A-Za-z0-9+/_-]+={0,2}$/.test(raw) && Buffer.from(raw, 'base64').length === 32 ? raw : refuse('must be 32 bytes in base64 (e.g. `openssl rand -base64 32`)'),
    to: { option: 'secretKey' },
  },
  'metrics-token': {
    commands: ['serve'],
    value: 'TOKEN',
    help: "the operators' credential for GET /metrics (Authorization: Bearer TOKEN); account tokens never open it",
    shownDefault: 'none: /metrics answers 403',
    secret: true,
    // Visible ASCII without spaces, so it fits an Authorization header as sent.
    check: (raw) => (/^[\x21-\x7e]{1,1024}$/.test(raw) ? raw : refuse('must be 1–1024 visible ASCII characters without spaces (e.g. `openssl rand -hex 32`)')),
    to: { option: 'metricsToken' },
  },
  's3-endpoint': {
    commands: ['serve'],
    value: 'URL',
    help: 'the S3-compatible service (MinIO, Ceph, …) of an s3:// --blob-store, addressed path-style',
    shownDefault: 'AWS S3',
    // Never echoed: a URL given with user:password in it holds a credential.
    secret: true,
    check: (raw) => {
      const value = text(raw);
      refuseThrown(() => checkS3Endpoint(value));
      return value;
    },
    to: { option: 's3Endpoint' },
  },
} satisfies Record<string, FlagRow>;

type FlagName = keyof typeof FLAGS;
const rows = Object.entries(FLAGS) as [FlagName, FlagRow][];

export interface ServeOptions {
  host: string;
  port: number;
  runloom: CommandRunloomOptions;
}

export interface ClientCreateOptions {
  account: string;
  runloom: CommandRunloomOptions;
}

/** `runloom serve` flags over `RUNLOOM_*` variables over defaults; undefined means `--help`. */
export function parseServeOptions(args: string[], env: Env): ServeOptions | undefined {
  const parsed = parseCommand('serve', args, env);
  if (!parsed) return undefined;
  const { own, runloom } = parsed;
  if (runloom.s3Endpoint !== undefined && !isS3Url(runloom.blobStore ?? '')) {
    throw new UsageError('--s3-endpoint needs --blob-store s3://BUCKET/PREFIX: the endpoint serves that bucket', false);
  }
  return { host: own.host as string, port: own.port as number, runloom };
}

/** `runloom client create` options; undefined means `--help`. */
export function parseClientCreateOptions(args: string[], env: Env): ClientCreateOptions | undefined {
  const parsed = parseCommand('client create', args, env);
  if (!parsed) return undefined;
  if (parsed.own.account === undefined) throw new UsageError('--account is required: the account the new client belongs to');
  return { account: parsed.own.account as string, runloom: parsed.runloom };
}

/** Where a value came from, as an error names it: `--port` or `RUNLOOM_PORT`. */
type Source = string;

/**
 * Reads the command's flags, fills the rest from the environment and the defaults, and checks
 * each value with its row's check, in the rows' order; the first problem is a `UsageError`
 * naming the flag or the variable the value came from.
 */
/** Both commands take `--data-dir`, which has a default: the options always name the data dir. */
type CommandRunloomOptions = CreateRunloomOptions & { dataDir: string };

function parseCommand(command: Command, args: string[], env: Env): { own: Record<string, unknown>; runloom: CommandRunloomOptions } | undefined {
  const flags = rows.filter(([, row]) => row.commands.includes(command));
  const values = parseFlags(args, flags);
  if (values.help) return undefined;

  const raw: Record<string, string | string[]> = {};
  const sources: Record<string, Source | Source[]> = {};
  for (const [name, row] of flags) {
    const given = values[name];
    if (row.repeatable) {
      const entries: string[] = [];
      const from: Source[] = [];
      for (const variable of envNames(name, row)) {
        for (const entry of listFromEnv(env[variable])) {
          entries.push(entry);
          from.push(variable);
        }
      }
      // Flags come last so a flag's secret wins over the environment's for the same client.
      for (const entry of (given as string[] | undefined) ?? []) {
        entries.push(entry);
        from.push(`--${name}`);
      }
      raw[name] = entries;
      sources[name] = from;
      continue;
    }
    const variable = envNames(name, row).find((candidate) => env[candidate] !== undefined);
    if (given !== undefined) {
      raw[name] = given === true ? 'true' : (given as string);
      sources[name] = `--${name}`;
    } else if (variable !== undefined) {
      raw[name] = env[variable]!;
      sources[name] = variable;
    } else if (row.default !== undefined) {
      raw[name] = row.default;
      sources[name] = `--${name}`;
    }
  }

  const own: Record<string, unknown> = {};
  const runloom: Record<string, unknown> = {};
  for (const [name, row] of flags) {
    let value: unknown;
    try {
      value = name in raw ? row.check(raw[name] as string & string[]) : undefined;
    } catch (error) {
      if (error instanceof FlagProblem) throw new UsageError(describe(name, error, raw, sources), false);
      throw error;
    }
    if ('option' in row.to) runloom[row.to.option] = value;
    else own[row.to.own] = value;
  }
  // The checks saw every value and --data-dir has a default, so this is what they produced.
  return { own, runloom: runloom as unknown as CommandRunloomOptions };
}

function describe(name: FlagName, { message, index }: FlagProblem, raw: Record<string, string | string[]>, sources: Record<string, Source | Source[]>): string {
  const row: FlagRow = FLAGS[name];
  const source = sources[name];
  if (Array.isArray(source)) {
    // A repeatable flag: name the entry by its place among those of its source, never by its text.
    const from = source[index ?? 0]!;
    const place = source.slice(0, (index ?? 0) + 1).filter((entry) => entry === from).length;
    return `${from} (entry ${place}) ${message}`;
  }
  const value = raw[name] as string;
  const shown = row.secret ? '' : `, got '${value.length > 200 ? `${value.slice(0, 200)}…` : value}'`;
  return `${source} ${message}${shown}`;
}

function parseFlags(args: string[], flags: [FlagName, FlagRow][]): Partial<Record<FlagName | 'help', string | boolean | string[]>> {
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> = { help: { type: 'boolean', short: 'h' } };
  for (const [name, row] of flags) options[name] = { type: row.value === undefined ? 'boolean' : 'string', multiple: row.repeatable ?? false };
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values as Partial<Record<FlagName | 'help', string | boolean | string[]>>;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function envNames(name: string, row: FlagRow): readonly string[] {
  return row.env ?? [`RUNLOOM_${name.toUpperCase().replace(/-/g, '_')}`];
}

function listFromEnv(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
}

/**
 * Why `dir` cannot be the data dir, or undefined when it can: it, or the nearest part of its path
 * that exists when it does not yet, must be a folder this process may write to. Creates nothing.
 */
export function dataDirProblem(dir: string): string | undefined {
  let existing = dir;
  let stats: Stats;
  for (;;) {
    try {
      stats = statSync(existing);
      break;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const parent = path.dirname(existing);
      // ENOTDIR: a part of the path is a file; the loop reaches it and says so.
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || parent === existing) return `cannot be used (${code ?? (error as Error).message})`;
      existing = parent;
    }
  }
  const toCreate = existing !== dir;
  if (!stats.isDirectory()) return toCreate ? `cannot be created: ${existing} is a file` : 'must be a folder, not a file';
  try {
    accessSync(existing, constants.W_OK | constants.X_OK);
  } catch {
    return toCreate ? `cannot be created: ${existing} is not writable` : 'must be a folder this user can write to';
  }
  return undefined;
}

/** `runloom <command> --help`, made from the rows of that command. */
export function usage(command: Command): string {
  const { synopsis, summary } = COMMAND_TEXT[command];
  const lines = rows
    .filter(([, row]) => row.commands.includes(command))
    .map(([name, row]) => {
      const variables = envNames(name, row);
      const env = variables.length === 0 ? '' : ` [${row.repeatable ? `${variables[0]}, comma-separated` : variables[0]}]`;
      const shown = row.shownDefault ?? row.default ?? ('option' in row.to ? defaultText(row.to.option) : undefined);
      return `  --${name}${row.value ? ` ${row.value}` : ''}\n      ${row.help}${shown === undefined ? '' : ` (default ${shown})`}${env}`;
    });
  lines.push('  -h, --help\n      show this help');
  return `Usage: ${synopsis}\n\n${summary}\n\nOptions (environment variable in brackets; flags win over it):\n${lines.join('\n')}\n`;
}

function defaultText(option: keyof RunloomConfig): string | undefined {
  const value = defaultConfig[option];
  return value === undefined ? undefined : String(value);
}

const COMMAND_TEXT: Record<Command, { synopsis: string; summary: string }> = {
  serve: { synopsis: 'runloom serve [options]', summary: 'Starts the Runloom HTTP server.' },
  'client create': {
    synopsis: 'runloom client create --account ACCOUNT [--data-dir DIR | --database-url URL [--secret-key BASE64]]',
    summary:
      'Creates a service-account client and prints its client_id and client_secret (shown once).\n' +
      'The embedded store can be open in one process only: stop a server running on the data dir first,\n' +
      'or let the server create the client at start with `runloom serve --bootstrap-client ACCOUNT:CLIENT_ID:SECRET`.',
  },
};
