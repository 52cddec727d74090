#!/usr/bin/env node
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ContainerModule } from 'inversify';
import pino from 'pino';
import { SECRET_KEY_FILE } from '../../core/src/adapters/node/aes-gcm-secret-box';
import { PinoLogger } from '../../core/src/adapters/node/pino-logger';
import { BlobStore, createRunloom, type CreateRunloomOptions, LocalDiskBlobStore, Logger, type Runloom, SecretKeyMismatchError } from '../../core/src/index';
import {
  CLIENT_CREATE_USAGE,
  parseClientCreateOptions,
  parseServeOptions,
  SERVE_USAGE,
  UsageError,
  type ServeOptions,
} from './cli-options';
import { listen } from './serve';

const USAGE = `Usage: runloom <command> [options]

Commands:
  serve            start the HTTP server
  client create    create a service-account client and print its credentials

Run 'runloom <command> --help' for the options of a command.
`;

/** The secret key is missing or is not the one the store's secrets were sealed with: one line, exit 2. */
class SecretKeyError extends Error {
  override readonly name = 'SecretKeyError';
}

const HOW_TO_PASS_THE_KEY = "pass the server's key with --secret-key (or RUNLOOM_SECRET_KEY), or --data-dir of the server, which holds it as secret.key";

/**
 * `createRunloom`, with a store whose secrets another key sealed (a PostgreSQL database shared with a
 * server whose key lives elsewhere) reported as which key is needed and how to pass it.
 */
async function openRunloom(options: CreateRunloomOptions & { dataDir: string }): Promise<Runloom> {
  try {
    return await createRunloom(options);
  } catch (error) {
    if (!(error instanceof SecretKeyMismatchError)) throw error;
    const tried = options.secretKey !== undefined ? 'the key given by --secret-key/RUNLOOM_SECRET_KEY' : path.join(options.dataDir, SECRET_KEY_FILE);
    throw new SecretKeyError(`the secret key does not match this database: its secrets were sealed with the key of the server that created them, not with ${tried}; ${HOW_TO_PASS_THE_KEY}`, {
      cause: error,
    });
  }
}

/** Runs one command; resolves to the exit code. */
async function main(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const [command, ...rest] = args;
  if (command === 'serve') return serve(rest, env);
  if (command === 'client' && rest[0] === 'create') return createClient(rest.slice(1), env);
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  throw new UsageError(command === undefined ? 'a command is required' : `unknown command '${args.slice(0, 2).join(' ')}'`);
}

async function serve(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const options = parseServeOptions(args, env);
  if (!options) {
    process.stdout.write(SERVE_USAGE);
    return 0;
  }
  const signals = shutdownSignals();
  const destination = pino.destination({ dest: 1, sync: false });
  const logger = new PinoLogger(destination);
  const runloom = await openRunloom({ ...options.runloom, modules: [hostModule(options, logger)] });
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
  destination.flushSync();
  return 0;
}

/** Binds what the server host provides: JSON logs on stdout, and the blob folder when given. */
function hostModule(options: ServeOptions, logger: Logger): ContainerModule {
  return new ContainerModule(({ rebind }) => {
    rebind(Logger).toConstantValue(logger);
    if (options.blobStore !== undefined) rebind(BlobStore).toConstantValue(new LocalDiskBlobStore(options.blobStore));
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
    process.stdout.write(CLIENT_CREATE_USAGE);
    return 0;
  }
  const { dataDir, databaseUrl, secretKey } = options.runloom;
  // Never a fresh key beside a database that may hold secrets sealed with the server's key.
  if (databaseUrl !== undefined && secretKey === undefined && !existsSync(path.join(dataDir, SECRET_KEY_FILE))) {
    throw new SecretKeyError(`--database-url needs the server's secret key, and ${dataDir} holds no ${SECRET_KEY_FILE}: ${HOW_TO_PASS_THE_KEY}`);
  }
  const runloom = await openRunloom(options.runloom);
  try {
    const credentials = await runloom.auth.createClient(options.account);
    process.stdout.write(`${JSON.stringify({ account: options.account, ...credentials }, null, 2)}\n`);
    process.stderr.write('Keep the client_secret now: it is stored only as a hash and cannot be shown again.\n');
  } finally {
    await runloom.close();
  }
  return 0;
}

main(process.argv.slice(2), process.env).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`runloom: ${error.message}\nRun 'runloom --help' or 'runloom <command> --help' for usage.\n`);
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
