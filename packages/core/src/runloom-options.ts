import { ContainerModule } from 'inversify';
import * as z from 'zod';
import type { RunloomConfig } from './config';
import { parseEgressAllow } from './adapters/node/address-policy';
import { blobStoreProblem, checkS3Endpoint, isS3Url } from './adapters/s3/s3-location';
import { parseBootstrapClients } from './domain/auth/bootstrap-clients';

/** A bad `createRunloom` option: the message names it (`createRunloom: options.port must be …`). */
export class RunloomOptionsError extends Error {
  override readonly name = 'RunloomOptionsError';
}

const positiveInteger = () => z.number().refine((value) => Number.isSafeInteger(value) && value > 0, 'must be a positive integer');
const nonNegativeInteger = () => z.number().refine((value) => Number.isSafeInteger(value) && value >= 0, 'must be an integer ≥ 0');

/**
 * One rule per `RunloomConfig` field: the `satisfies` below makes a field added to the config
 * without a rule here a type error, so no option goes unchecked. Each is made only when its option
 * is given (a host gives few; all of them were ~80 zod schemas made by every start).
 */
const configRules = {
  dataDir: () => z.string().trim().min(1, 'must be a folder path, not empty'),
  databaseUrl: () =>
    z
      .string()
      .regex(/^postgres(ql)?:\/\//i, 'must be a postgres:// or postgresql:// URL; leave it unset to use the embedded store in dataDir'),
  workspacesDir: () => z.string().trim().min(1, 'must be a folder path, not empty; leave it unset for <dataDir>/workspaces'),
  blobStore: () =>
    z
      .string()
      .trim()
      .min(1, 'must be a folder path or an s3://bucket/prefix URL, not empty; leave it unset for <dataDir>/blobs')
      .superRefine((value, context) => {
        const problem = blobStoreProblem(value);
        if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
      }),
  s3Endpoint: () =>
    z.string().superRefine((value, context) => {
      try {
        checkS3Endpoint(value);
      } catch (error) {
        context.addIssue({ code: 'custom', message: (error as Error).message });
      }
    }),
  basePath: () =>
    z
      .string()
      .regex(/^((\/[\w.~-]+)+)?$/, "must be '' or look like /prefix or /a/b (letters, digits, . _ ~ -), without a trailing /"),
  tokenTtlSeconds: positiveInteger,
  rateLimit: () => z.number().nonnegative('must be a number ≥ 0 (0 turns limiting off)').refine(Number.isFinite, 'must be a finite number'),
  jsonBodyLimitBytes: positiveInteger,
  uploadLimitBytes: positiveInteger,
  allowPrivateNetwork: () => z.boolean(),
  egressAllow: () =>
    z.array(z.string()).superRefine((entries, context) => {
      try {
        parseEgressAllow(entries);
      } catch (error) {
        context.addIssue({ code: 'custom', message: (error as Error).message });
      }
    }),
  callbackMaxAttempts: positiveInteger,
  callbackInitialBackoffMs: nonNegativeInteger,
  callbackTimeoutMs: positiveInteger,
  runConcurrency: positiveInteger,
  runConcurrencyPerAccount: positiveInteger,
  threadStreamIdleTimeoutMs: positiveInteger,
  secretKey: () =>
    z
      .string()
      .refine((value) => /^[A-Za-z0-9+/_-]+={0,2}$/.test(value) && Buffer.from(value, 'base64').length === 32, 'must be 32 bytes in base64 (e.g. `openssl rand -base64 32`)'),
  metricsToken: () => z.string().regex(/^[\x21-\x7e]{1,1024}$/, 'must be 1–1024 visible ASCII characters without spaces'),
  bootstrapClients: () =>
    z.array(z.string()).superRefine((entries, context) => {
      try {
        parseBootstrapClients(entries);
      } catch (error) {
        // Its message names the entry by position and never repeats it: entries hold secrets.
        context.addIssue({ code: 'custom', message: (error as Error).message });
      }
    }),
  shellCommands: () => z.boolean(),
} satisfies { [K in keyof RunloomConfig]-?: () => z.ZodType<Exclude<RunloomConfig[K], undefined>> };

const modulesRule = () =>
  z.array(z.custom<ContainerModule>((value) => value instanceof ContainerModule, "must be a ContainerModule imported from '@runloom/core'"));

/** The rules by option name: the config's, then the host's `modules`. */
const optionRules: Record<string, () => z.ZodType> = { ...configRules, modules: modulesRule };

/**
 * Checks `createRunloom`'s options (undefined means "the default") and answers the config overrides
 * and the host's modules; a bad or unknown option is a `RunloomOptionsError` naming it.
 */
export function parseRunloomOptions(options: unknown): { overrides: Partial<RunloomConfig>; modules: ContainerModule[] } {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new RunloomOptionsError('createRunloom: options must be an object');
  }
  const defined = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
  // Each given option by its rule, in the rules' order, then the unknown ones: the error a strict
  // object of every rule would give first, without making the object or the rules of the others.
  const parsed: Record<string, unknown> = {};
  for (const [name, rule] of Object.entries(optionRules)) {
    if (!Object.hasOwn(defined, name)) continue;
    const result = rule().safeParse(defined[name]);
    if (!result.success) throw new RunloomOptionsError(describe(name, result.error.issues[0]!));
    parsed[name] = result.data;
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

function describe(name: string, issue: z.core.$ZodIssue): string {
  const where = issue.path.map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`)).join('');
  const message = issue.code === 'invalid_type' ? `must be ${article(issue.expected)}` : issue.message;
  return `createRunloom: options.${name}${where} ${message}`;
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}
