#!/usr/bin/env node
import { existsSync } from 'node:fs';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { PinoLogger, SECRET_KEY_FILE, StoreLockedError } from '@runloom/core/node';
import { ContainerModule, createRunloom, Logger, SecretKeyMismatchError, type CreateRunloomOptions, type Runloom } from '@runloom/core';
import { parseClientCreateOptions, parseServeOptions, usage, UsageError } from './cli-options';
import { listen } from './serve';
import { version } from '../package.json';

const USAGE = `Usage: runloom <command> [options]

Commands:
  serve            start the HTTP server
  client create    create a service-account client and print its credentials

Run 'runloom <command> --help' (or 'runloom help <command>') for the options of a command,
'runloom --version' for the version.
`;

const CLIENT_USAGE = `Usage: runloom client <subcommand> [options]

Subcommands:
  create    create a service-account client and print its credentials

Run 'runloom client create --help' for its options.
`;

/** The secret key is missing or is not the one the store's secrets were sealed with: one line, exit 2. */
class SecretKeyError extends Error {
  override readonly name = 'SecretKeyError';
}

const HOW_TO_PASS_THE_KEY = "pass the server's key with --secret-key (or RUNLOOM_SECRET_KEY), or --data-dir of the server, which holds it as secret.key";

/**
 * One background thread for V8's optimising compiles of wasm (its default: one per platform worker,
 * four). Both commands open the sql.js store, whose migrations make ~60 of its functions hot at once:
 * four threads compiling them took a small machine's cores from the thread starting the server, and
 * held four compiles' memory at a time (~20 MB more RSS at listening). Read when the compiles are
 * scheduled, so setting it before the store opens is enough.
 */
setFlagsFromString('--wasm-num-compilation-tasks=1');

/** Runs one command; resolves to the exit code. */
async function main(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const [command, ...rest] = args;
  if (command === 'serve') return serve(rest, env);
  if (command === 'client') return client(rest, env);
  if (command === '--version' || command === '-v') {
    process.stdout.write(`${version}\n`);
    return 0;
  }
  if (command === '--help' || command === '-h') return help([]);
  if (command === 'help') return help(rest);
  throw new UsageError(command === undefined ? 'a command is required' : `unknown command '${command}'`);
}

/** `runloom help [command]`: the same text as `runloom <command> --help`. */
function help(topic: string[]): number {
  const name = topic.join(' ');
  const text = name === '' ? USAGE : name === 'serve' ? usage('serve') : name === 'client' ? CLIENT_USAGE : name === 'client create' ? usage('client create') : undefined;
  if (text === undefined) throw new UsageError(`no help for '${name}': the commands are serve and client create`);
  process.stdout.write(text);
  return 0;
}

async function client(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const [subcommand, ...rest] = args;
  if (subcommand === 'create') return createClient(rest, env);
  if (subcommand === '--help' || subcommand === '-h') return help(['client']);
  throw new UsageError(subcommand === undefined ? "'runloom client' needs a subcommand: create" : `unknown command 'client ${subcommand}'`);
}

async function serve(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const options = parseServeOptions(args, env);
  if (!options) {
    process.stdout.write(usage('serve'));
    return 0;
  }
  const signals = shutdownSignals();
  // JSON lines on stdout; through the core's pino, so the CLI bundles no second copy.
  const logger = new PinoLogger();
  const runloom = await open({ ...options.runloom, modules: [hostModule(logger)] }, 'serve');
  let server: Awaited<ReturnType<typeof listen>>;
  try {
    server = await listen(runloom, { host: options.host, port: options.port });
  } catch (error) {
    await runloom.close();
    throw error;
  }
  process.stdout.write(`runloom listening on ${server.url}\n`);

  const signal = await signals.first;
  logger.info({ signal }, 'shutting down: finishing in-flight requests');
  await server.stop();
  await runloom.close();
  logger.info({}, 'stopped');
  logger.flushSync();
  return 0;
}

/** Binds what the server host provides: JSON logs on stdout. */
function hostModule(logger: Logger): ContainerModule {
  return new ContainerModule(({ rebind }) => {
    rebind(Logger).toConstantValue(logger);
  });
}

/** The first SIGTERM/SIGINT starts a graceful stop; a second one exits at once. */
function shutdownSignals(): { first: Promise<NodeJS.Signals> } {
  let received = 0;
  const first = new Promise<NodeJS.Signals>((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      received += 1;
      if (received > 1) {
        process.stderr.write(`runloom: ${signal} again, exiting without finishing in-flight work\n`);
        process.exit(1);
      }
      resolve(signal);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
  return { first };
}

async function createClient(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const options = parseClientCreateOptions(args, env);
  if (!options) {
    process.stdout.write(usage('client create'));
    return 0;
  }
  const { dataDir, databaseUrl, secretKey } = options.runloom;
  // Never a fresh key beside a database that may hold secrets sealed with the server's key.
  if (databaseUrl !== undefined && secretKey === undefined && !existsSync(path.join(dataDir, SECRET_KEY_FILE))) {
    throw new SecretKeyError(`--database-url needs the server's secret key, and ${dataDir} holds no ${SECRET_KEY_FILE}: ${HOW_TO_PASS_THE_KEY}`);
  }
  const runloom = await open(options.runloom, 'client create');
  try {
    const credentials = await runloom.auth.createClient(options.account);
    process.stdout.write(`${JSON.stringify({ account: options.account, ...credentials }, null, 2)}\n`);
    process.stderr.write('Keep the client_secret now: it is stored only as a hash and cannot be shown again.\n');
  } finally {
    await runloom.close();
  }
  return 0;
}

/**
 * `createRunloom`, with the two ways a store can refuse this process told as what to do: a data dir
 * held by another process (a running server: the embedded store can be open in one process only),
 * and secrets sealed with another key (a PostgreSQL database shared with a server whose key lives
 * elsewhere).
 */
async function open(options: CreateRunloomOptions & { dataDir: string }, command: 'serve' | 'client create'): Promise<Runloom> {
  try {
    return await createRunloom(options);
  } catch (error) {
    if (error instanceof SecretKeyMismatchError) {
      const tried = options.secretKey !== undefined ? 'the key given by --secret-key/RUNLOOM_SECRET_KEY' : path.join(options.dataDir, SECRET_KEY_FILE);
      throw new SecretKeyError(`the secret key does not match this database: its secrets were sealed with the key of the server that created them, not with ${tried}; ${HOW_TO_PASS_THE_KEY}`, {
        cause: error,
      });
    }
    if (!(error instanceof StoreLockedError)) throw error;
    const held = `the data dir ${options.dataDir} is in use by another runloom (process ${error.pid})`;
    throw new UsageError(
      command === 'client create'
        ? `${held}: stop that server first and run this command again, or restart the server with ` +
            '--bootstrap-client ACCOUNT:CLIENT_ID:SECRET (or RUNLOOM_BOOTSTRAP_CLIENTS), which creates the client at start'
        : `${held}: stop it first, or give this server another --data-dir`,
      false,
    );
  }
}

main(process.argv.slice(2), process.env).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError) {
      const hint = error.showHelp ? "\nRun 'runloom --help' or 'runloom <command> --help' for usage." : '';
      process.stderr.write(`runloom: ${error.message}${hint}\n`);
      process.exit(2);
    }
    if (error instanceof SecretKeyError) {
      process.stderr.write(`runloom: ${error.message}\n`);
      process.exit(2);
    }
    process.stderr.write(`runloom: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
