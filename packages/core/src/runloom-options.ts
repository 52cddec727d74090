import { ContainerModule } from 'inversify';
import type { RunloomConfig } from './config';
import { parseEgressAllow } from './adapters/node/address-policy';
import { blobStoreProblem, checkS3Endpoint, isS3Url } from './adapters/s3/s3-location';
import { parseBootstrapClients } from './domain/auth/bootstrap-clients';

/** A bad `createRunloom` option: the message names it (`createRunloom: options.port must be …`). */
export class RunloomOptionsError extends Error {
  override readonly name = 'RunloomOptionsError';
}

/** What is wrong with an option's value, and where inside it (`[2]`, an entry of a list). */
class OptionProblem {
  constructor(
    readonly message: string,
    readonly where = '',
  ) {}
}

function refuse(message: string, where?: string): never {
  throw new OptionProblem(message, where);
}

/** Runs a parser that throws what is wrong, its message the option's problem. */
function refuseThrown(parse: () => unknown): void {
  try {
    parse();
  } catch (error) {
    refuse((error as Error).message);
  }
}

const string = (value: unknown): string => (typeof value === 'string' ? value : refuse('must be a string'));
// NaN and ±Infinity are not numbers an option can mean.
const number = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : refuse('must be a number'));
const boolean = (value: unknown): boolean => (typeof value === 'boolean' ? value : refuse('must be a boolean'));

function list<T>(value: unknown, entry: (item: unknown) => item is T, message: string): T[] {
  if (!Array.isArray(value)) refuse('must be an array');
  for (let index = 0; index < value.length; index++) if (!entry(value[index])) refuse(message, `[${index}]`);
  return [...value];
}

const strings = (value: unknown): string[] => list(value, (item): item is string => typeof item === 'string', 'must be a string');

/** The text, trimmed; `message` when nothing is left. */
function nonEmpty(value: unknown, message: string): string {
  const text = string(value).trim();
  return text === '' ? refuse(message) : text;
}

function matching(value: unknown, pattern: RegExp, message: string): string {
  const text = string(value);
  return pattern.test(text) ? text : refuse(message);
}

function positiveInteger(value: unknown): number {
  const count = number(value);
  return Number.isSafeInteger(count) && count > 0 ? count : refuse('must be a positive integer');
}

function nonNegativeInteger(value: unknown): number {
  const count = number(value);
  return Number.isSafeInteger(count) && count >= 0 ? count : refuse('must be an integer ≥ 0');
}

/**
 * One rule per `RunloomConfig` field: the `satisfies` below makes a field added to the config
 * without a rule here a type error, so no option goes unchecked. Each checks and converts a given
 * value, throwing an `OptionProblem`. Plain code rather than zod: the first zod schema of each kind
 * a process makes costs zod's set-up of that kind, which checking the options made part of every start.
 */
const configRules = {
  dataDir: (value) => nonEmpty(value, 'must be a folder path, not empty'),
  databaseUrl: (value) =>
    matching(value, /^postgres(ql)?:\/\//i, 'must be a postgres:// or postgresql:// URL; leave it unset to use the embedded store in dataDir'),
  workspacesDir: (value) => nonEmpty(value, 'must be a folder path, not empty; leave it unset for <dataDir>/workspaces'),
  blobStore: (value) => {
    const location = nonEmpty(value, 'must be a folder path or an s3://bucket/prefix URL, not empty; leave it unset for <dataDir>/blobs');
    const problem = blobStoreProblem(location);
    return problem === undefined ? location : refuse(problem);
  },
  s3Endpoint: (value) => {
    const endpoint = string(value);
    refuseThrown(() => checkS3Endpoint(endpoint));
    return endpoint;
  },
  basePath: (value) => matching(value, /^((\/[\w.~-]+)+)?$/, "must be '' or look like /prefix or /a/b (letters, digits, . _ ~ -), without a trailing /"),
  tokenTtlSeconds: positiveInteger,
  rateLimit: (value) => {
    const rate = number(value);
    return rate >= 0 ? rate : refuse('must be a number ≥ 0 (0 turns limiting off)');
  },
  jsonBodyLimitBytes: positiveInteger,
  uploadLimitBytes: positiveInteger,
  allowPrivateNetwork: boolean,
  egressAllow: (value) => {
    const entries = strings(value);
    refuseThrown(() => parseEgressAllow(entries));
    return entries;
  },
  callbackMaxAttempts: positiveInteger,
  callbackInitialBackoffMs: nonNegativeInteger,
  callbackTimeoutMs: positiveInteger,
  runConcurrency: positiveInteger,
  runConcurrencyPerAccount: positiveInteger,
  threadStreamIdleTimeoutMs: positiveInteger,
  secretKey: (value) => {
    const key = string(value);
    const valid = /^[A-Za-z0-9+/_-]+={0,2}$/.test(key) && Buffer.from(key, 'base64').length === 32;
    return valid ? key : refuse('must be 32 bytes in base64 (e.g. `openssl rand -base64 32`)');
  },
  metricsToken: (value) => matching(value, /^[\x21-\x7e]{1,1024}$/, 'must be 1–1024 visible ASCII characters without spaces'),
  bootstrapClients: (value) => {
    const entries = strings(value);
    // Its message names the entry by position and never repeats it: entries hold secrets.
    refuseThrown(() => parseBootstrapClients(entries));
    return entries;
  },
  shellCommands: boolean,
} satisfies { [K in keyof RunloomConfig]-?: (value: unknown) => Exclude<RunloomConfig[K], undefined> };

/** The rules by option name: the config's, then the host's `modules`. */
const optionRules: Record<string, (value: unknown) => unknown> = {
  ...configRules,
  modules: (value) => list(value, (item): item is ContainerModule => item instanceof ContainerModule, "must be a ContainerModule imported from '@runloom/core'"),
};

/**
 * Checks `createRunloom`'s options (undefined means "the default") and answers the config overrides
 * and the host's modules; a bad or unknown option is a `RunloomOptionsError` naming it.
 */
export function parseRunloomOptions(options: unknown): { overrides: Partial<RunloomConfig>; modules: ContainerModule[] } {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new RunloomOptionsError('createRunloom: options must be an object');
  }
  const defined = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
  // Each given option by its rule, in the rules' order, then the unknown ones.
  const parsed: Record<string, unknown> = {};
  for (const [name, rule] of Object.entries(optionRules)) {
    if (!Object.hasOwn(defined, name)) continue;
    try {
      parsed[name] = rule(defined[name]);
    } catch (error) {
      if (error instanceof OptionProblem) throw new RunloomOptionsError(`createRunloom: options.${name}${error.where} ${error.message}`);
      throw error;
    }
  }
  const unknown = Object.keys(defined).filter((name) => !Object.hasOwn(optionRules, name));
  if (unknown.length > 0) {
    throw new RunloomOptionsError(`createRunloom: unknown option${unknown.length > 1 ? 's' : ''} ${unknown.map((name) => `'${name}'`).join(', ')}`);
  }
  const { modules = [], ...overrides } = parsed as Partial<RunloomConfig> & { modules?: ContainerModule[] };
  if (overrides.s3Endpoint !== undefined && !isS3Url(overrides.blobStore ?? '')) {
    throw new RunloomOptionsError('createRunloom: options.s3Endpoint needs options.blobStore to be an s3://bucket/prefix URL');
  }
  return { overrides, modules };
}
