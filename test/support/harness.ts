import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ContainerModule } from 'inversify';
import { Clock, createRunloom, PasswordHasher, type CreateRunloomOptions, type Runloom } from '../../packages/core/src/index';
import { ScryptPasswordHasher } from '../../packages/core/src/node';
import type { ManualClock } from '../../packages/core/src/testing/manual-clock';

export interface TestRunloom {
  /** The running instance; a new object after `restart()`. */
  readonly runloom: Runloom;
  readonly dataDir: string;
  /** A bearer token of `account` (default 'acct-a'); its client is created on first use. */
  token(account?: string): Promise<string>;
  /** `runloom.handle` on `http://runloom.test` + path, with a bearer token of `init.account`. */
  request(path: string, init?: RequestInit & { account?: string }): Promise<Response>;
  /** Closes the instance and opens a new one on the same data dir and options (clients survive). */
  restart(): Promise<void>;
  /** Closes the instance and removes the data dir. */
  close(): Promise<void>;
}

export interface TestRunloomOptions extends CreateRunloomOptions {
  /**
   * Binds this clock instead of the system's: the instance's time and timers (run timeouts, job
   * retries and polls, callback backoff) move only when the test advances it. Closing advances it
   * through the shutdown's grace periods.
   */
  clock?: ManualClock;
}

export const TEST_ORIGIN = 'http://runloom.test';

/**
 * Real scrypt at a low cost: each client and token costs a hash, and at the production cost
 * (pinned in scrypt-password-hasher.test.ts) that would dominate every test file's time.
 */
const fastHasherModule = new ContainerModule(({ rebind }) => {
  rebind(PasswordHasher).toConstantValue(new ScryptPasswordHasher({ logN: 10, r: 8, p: 1 }));
});

/**
 * A Runloom on a fresh temp data dir (`options.dataDir` is ignored), for tests. Tokens are cached per account until shortly
 * before they expire, so tests pay for client creation and token signing once per account.
 */
export async function startTestRunloom(options: TestRunloomOptions = {}): Promise<TestRunloom> {
  const { clock } = options;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-'));
  const clockModule = clock && new ContainerModule(({ rebind }) => {
    rebind(Clock).toConstantValue(clock);
  });
  const modules = [fastHasherModule, ...(clockModule ? [clockModule] : []), ...(options.modules ?? [])];
  // Read `options` at each start: a test may change them between starts to restart differently.
  const start = (): Promise<Runloom> => {
    const { clock: _clock, ...runloomOptions } = options;
    return createRunloom({ ...runloomOptions, dataDir, modules });
  };
  const closeRunloom = (): Promise<void> => (clock ? clock.advanceUntil(runloom.close()) : runloom.close());
  const nowMs = (): number => (clock ? clock.now().getTime() : Date.now());
  let runloom: Runloom;
  try {
    runloom = await start();
  } catch (error) {
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  const clients = new Map<string, Promise<{ client_id: string; client_secret: string }>>();
  const tokens = new Map<string, { token: string; expiresAtMs: number }>();

  const token = async (account = 'acct-a'): Promise<string> => {
    const cached = tokens.get(account);
    if (cached && nowMs() < cached.expiresAtMs) return cached.token;
    let client = clients.get(account);
    if (!client) {
      client = runloom.auth.createClient(account);
      clients.set(account, client);
    }
    const { client_id, client_secret } = await client;
    const issued = await runloom.auth.issueToken({ grant_type: 'client_credentials', client_id, client_secret });
    // Renew a second early: a token about to expire would make a test flaky, not fail for a reason.
    tokens.set(account, { token: issued.access_token, expiresAtMs: nowMs() + (issued.expires_in - 1) * 1000 });
    return issued.access_token;
  };

  return {
    get runloom() {
      return runloom;
    },
    dataDir,
    token,
    async request(requestPath, init = {}) {
      const { account, ...requestInit } = init;
      const headers = new Headers(requestInit.headers);
      if (!headers.has('authorization')) headers.set('authorization', `Bearer ${await token(account)}`);
      return runloom.handle(new Request(`${TEST_ORIGIN}${requestPath}`, { ...requestInit, headers }));
    },
    async restart() {
      await closeRunloom();
      runloom = await start();
    },
    async close() {
      try {
        await closeRunloom();
      } finally {
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}
