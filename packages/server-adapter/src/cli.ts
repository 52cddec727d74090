#!/usr/bin/env node
import pino from 'pino';
import { LocalDiskBlobStore, PinoLogger } from '@runloom/core/node';
import { BlobStore, ContainerModule, createRunloom, Logger } from '@runloom/core';
import {
  CLIENT_CREATE_USAGE,
  parseClientCreateOptions,
  parseServeOptions,
  SERVE_USAGE,
  UsageError,
  type ServeOptions,
} from './cli-options';
import { listen } from './serve';
import { version } from '../package.json';

const USAGE = `Usage: runloom <command> [options]

Commands:
  serve            start the HTTP server
  client create    create a service-account client and print its credentials

Run 'runloom <command> --help' for the options of a command, 'runloom --version' for the version.
`;

/** Runs one command; resolves to the exit code. */
async function main(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const [command, ...rest] = args;
  if (command === 'serve') return serve(rest, env);
  if (command === 'client' && rest[0] === 'create') return createClient(rest.slice(1), env);
  if (command === '--version' || command === '-v') {
    process.stdout.write(`${version}\n`);
    return 0;
  }
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
  const runloom = await createRunloom({ ...options.runloom, modules: [hostModule(options, logger)] });
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
  const runloom = await createRunloom(options.runloom);
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
    process.stderr.write(`runloom: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
