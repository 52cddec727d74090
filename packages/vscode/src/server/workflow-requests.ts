import type { Connection } from 'vscode-languageserver/node';
import { parse } from 'yaml';
import type { Command, ProcessRunView } from '@runloom/core';
import {
  ActOnProcessRun,
  CancelExecution,
  type CommandItem,
  CommandOutput,
  ExecuteCommand,
  ListCommands,
  ListProcessRuns,
  type ProcessRunItem,
  StartProcessRun,
} from '../common/protocol';
import { EDITOR_ACCOUNT, type EmbeddedRunloom } from './embedded-runloom';

/** Listed per view refresh: far more than a side panel shows. */
const PAGE = { limit: 500, offset: 0 };

/**
 * The Commands and Process Runs views' requests, answered with the core's command and process
 * services; an execution's output is forwarded as it is written (`CommandOutput`).
 */
export function serveWorkflowRequests(connection: Connection, embedded: Promise<EmbeddedRunloom>): void {
  connection.onRequest(ListCommands.type, async ({ workspaceId }) => {
    const { runloom } = await embedded;
    const commands = await runloom.commands.list(EDITOR_ACCOUNT, workspaceId, { ...PAGE });
    return commands.map((command) => toCommandItem(workspaceId, command));
  });

  connection.onRequest(ExecuteCommand.type, async ({ workspaceId, trigger, args }) => {
    const { runloom } = await embedded;
    const { runId } = await runloom.commandExecutions.execute(EDITOR_ACCOUNT, workspaceId, trigger, { args });
    const events = await runloom.commandExecutions.follow(EDITOR_ACCOUNT, workspaceId, trigger, runId);
    void forwardOutput(connection, { workspaceId, trigger, runId }, events);
    return { runId };
  });

  connection.onRequest(CancelExecution.type, async ({ workspaceId, trigger, runId }) => {
    const { runloom } = await embedded;
    const execution = await runloom.commandExecutions.cancel(EDITOR_ACCOUNT, workspaceId, trigger, runId);
    return { status: execution.status };
  });

  connection.onRequest(ListProcessRuns.type, async ({ workspaceId }) => {
    const { runloom } = await embedded;
    return (await runloom.processes.list(EDITOR_ACCOUNT, workspaceId, undefined, PAGE)).map(toProcessRunItem);
  });

  connection.onRequest(StartProcessRun.type, async ({ workspaceId, processId, specYaml }) => {
    const { runloom } = await embedded;
    // The file's problems were shown as diagnostics; creating the run checks the spec again (400).
    const created = await runloom.processes.create(EDITOR_ACCOUNT, workspaceId, processId, { spec: parse(specYaml, { maxAliasCount: 100 }) as never });
    return toProcessRunItem((await runloom.processes.act(EDITOR_ACCOUNT, workspaceId, created.id, 'start')).data);
  });

  connection.onRequest(ActOnProcessRun.type, async ({ workspaceId, runId, action, phaseId, taskId }) => {
    const { processes } = (await embedded).runloom;
    const done = await (async () => {
      switch (action) {
        case 'retry':
        case 'skip':
          if (!phaseId || !taskId) throw new Error(`${action} needs the task's phase and id`);
          return action === 'retry' ? processes.retryTask(EDITOR_ACCOUNT, workspaceId, runId, phaseId, taskId) : processes.skipTask(EDITOR_ACCOUNT, workspaceId, runId, phaseId, taskId);
        case 'approve':
        case 'reject':
          return processes.approve(EDITOR_ACCOUNT, workspaceId, runId, { phaseId, taskId, decision: action });
        default:
          return processes.act(EDITOR_ACCOUNT, workspaceId, runId, action);
      }
    })();
    return { message: done.message, run: toProcessRunItem(done.data) };
  });
}

async function forwardOutput(
  connection: Connection,
  execution: { workspaceId: string; trigger: string; runId: string },
  events: AsyncIterable<{ type: 'status'; execution: { status: string; error: { message: string } | null } } | { type: 'output'; text: string }>,
): Promise<void> {
  for await (const event of events) {
    if (event.type === 'output') {
      await connection.sendNotification(CommandOutput.type, { ...execution, text: event.text });
    } else if (['succeeded', 'failed', 'cancelled'].includes(event.execution.status)) {
      await connection.sendNotification(CommandOutput.type, { ...execution, status: event.execution.status, error: event.execution.error?.message });
      return;
    }
  }
}

function toCommandItem(workspaceId: string, command: Command): CommandItem {
  return {
    workspaceId,
    trigger: command.trigger,
    name: command.name,
    description: command.description,
    category: command.category,
    type: command.type,
    args: command.args.map((arg) => ({ name: arg.name, description: arg.description, required: arg.required })),
  };
}

function toProcessRunItem(run: ProcessRunView): ProcessRunItem {
  return {
    workspaceId: run.workspace_id,
    runId: run.id,
    processId: run.process_id,
    name: run.spec.name,
    status: run.status,
    createdAt: run.created_at,
    phases: run.phases.map((phase) => ({
      id: phase.id,
      name: phase.name,
      status: phase.status,
      tasks: phase.tasks.map((task) => ({ id: task.id, name: task.name, type: task.type, status: task.status, attempts: task.attempts, error: task.error?.message ?? null })),
    })),
  };
}
