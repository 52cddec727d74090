import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRunloom, type CreateRunloomOptions, type Runloom } from '../../packages/core/src/index';
import { listen } from '../../packages/server-adapter/src/serve';

export interface TestServer {
  /** `http://127.0.0.1:PORT`, plus the base path when one is configured. */
  readonly url: string;
  readonly runloom: Runloom;
  readonly dataDir: string;
  /** Stops the server gracefully, closes Runloom and removes the temp data dir. */
  close(): Promise<void>;
}

/**
 * A Runloom on a fresh temp data dir, served by node:http on 127.0.0.1 at a free port, for tests
 * that need a real loopback server (callbacks, streaming clients, OAuth libraries).
 */
export async function startTestServer(options: CreateRunloomOptions = {}): Promise<TestServer> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-'));
  let runloom: Runloom | undefined;
  try {
    runloom = await createRunloom({ ...options, dataDir });
    const server = await listen(runloom, { host: '127.0.0.1', port: 0, shutdownGraceMs: 2_000 });
    const started = runloom;
    return {
      url: `${server.url}${options.basePath ?? ''}`,
      runloom: started,
      dataDir,
      async close() {
        try {
          await server.stop();
          await started.close();
        } finally {
          fs.rmSync(dataDir, { recursive: true, force: true });
        }
      },
    };
  } catch (error) {
    await runloom?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
}
