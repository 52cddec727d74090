import { createRunloom } from '../src/runloom';
import { JobQueue } from '../src/ports/job-queue';

/**
 * Child process of the queue's kill -9 test: starts a Runloom on DIR, enqueues one job whose
 * handler never finishes, and prints `running <jobId> <attempt>` once the attempt has begun.
 * Usage: queue-crash-child.ts DIR
 */
async function main(): Promise<void> {
  const dataDir = process.argv[2];
  if (!dataDir) throw new Error('usage: queue-crash-child.ts DIR');
  const runloom = await createRunloom({ dataDir });
  const queue = runloom.container.get<JobQueue>(JobQueue);
  queue.register('crash-test', async (_payload, context) => {
    process.stdout.write(`running ${context.jobId} ${context.attempt}\n`);
    await new Promise<never>(() => {});
  });
  await queue.enqueue('crash-test', { survives: 'kill -9' });
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
