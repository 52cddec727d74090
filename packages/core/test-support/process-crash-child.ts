import { ProcessEngine } from '../src/domain/processes/process-engine';
import type { ProcessRunRecord } from '../src/domain/processes/process-run-record';
import { WorkspaceEvents } from '../src/domain/workspace-events/workspace-events';
import { createRunloom } from '../src/index';

/**
 * Child process of the process runs' kill -9 test. Starts a Runloom on DIR (on PostgreSQL when
 * RUNLOOM_DATABASE_URL is set). With `approval` or `runnable`, it points ACCOUNT's openai provider
 * at the fake, creates a workspace and a process run whose first phase asks the model once, and
 * starts it; the second phase is an approval, or a runnable task (a prompt runnable on the fake).
 * It prints `ready <workspaceId> <runId>` once the run waits on the approval, or once the runnable
 * task has stored the run it started. With `resume`, it only starts (resuming what the store holds)
 * and prints `started`. Either way it then waits to be killed.
 *
 * Usage: process-crash-child.ts DIR approval|runnable ACCOUNT OPENAI_CREDENTIALS_JSON MODEL
 *        process-crash-child.ts DIR resume
 */
async function main(): Promise<void> {
  const [dataDir, mode, account, credentials, model] = process.argv.slice(2);
  if (!dataDir || !['approval', 'runnable', 'resume'].includes(mode ?? '')) throw new Error('usage: process-crash-child.ts DIR approval|runnable|resume …');
  const runloom = await createRunloom({ dataDir, databaseUrl: process.env.RUNLOOM_DATABASE_URL || undefined, allowPrivateNetwork: true });
  if (mode === 'resume') {
    process.stdout.write('started\n');
    return;
  }
  await runloom.providers.put(account!, 'openai', { enabled: true, credentials: JSON.parse(credentials!) });
  const workspace = await runloom.workspaces.create(account!, { name: 'crash' }, 'crash-test');
  const llms = [{ provider: 'openai', model: model! }];
  const second =
    mode === 'approval'
      ? { id: 'gate', name: 'Gate', type: 'approval', input: { message: 'Ship it?' } }
      : {
          id: 'sub',
          name: 'Sub run',
          type: 'runnable',
          input: {
            runnable_id: (await runloom.runnables.create(account!, { name: 'sub', config_content_parsed: { type: 'prompt', prompt: { messages: [{ role: 'user', content: 'Sub?' }] }, llms } }, 'crash-test')).id,
          },
        };
  const spec = {
    name: 'crash',
    phases: [
      { id: 'first', name: 'First', tasks: [{ id: 'ask', name: 'Ask', type: 'prompt', input: { prompt: 'Hello?' } }] },
      { id: 'second', name: 'Second', tasks: [second] },
    ],
  };
  const run = await runloom.processes.create(account!, workspace.id, 'crash', { spec, model: { provider: 'openai', model: model! } } as never);
  const reached = (record: ProcessRunRecord | undefined): boolean =>
    mode === 'approval' ? record?.status === 'waiting_approval' : record?.phases[1]!.tasks[0]!.state.child_id != null;
  const engine = runloom.container.get<ProcessEngine>(ProcessEngine);
  await new Promise<void>((resolve) => {
    const check = (): void => {
      engine.runs.get(account!, run.id).then((record) => {
        if (!reached(record)) return;
        subscription.unsubscribe();
        resolve();
      }, fail);
    };
    const subscription = runloom.container.get<WorkspaceEvents>(WorkspaceEvents).subscribe(workspace.id, check);
    void runloom.processes.act(account!, workspace.id, run.id, 'start').then(check, fail);
  });
  process.stdout.write(`ready ${workspace.id} ${run.id}\n`);
}

function fail(error: unknown): void {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
}

main().catch(fail);
