import type { AccountRecord } from '../storage/repository';
import type { CommandFile } from './command-files';
import type { CommandExecution, CommandModel, ExecutionStatus } from './command-schemas';

export const EXECUTIONS = 'command_executions';

export const FINISHED_STATUSES: readonly ExecutionStatus[] = ['succeeded', 'failed', 'cancelled'];

export function isFinished(status: ExecutionStatus): boolean {
  return FINISHED_STATUSES.includes(status);
}

export interface ExecutionFailure {
  code: string;
  message: string;
}

/**
 * A stored execution: the view plus what the job needs — the command as it was when executed
 * (later edits do not change a queued execution) and the model a prompt command resolved to.
 */
export interface ExecutionRecord extends AccountRecord, CommandExecution {
  command: CommandFile;
  model: CommandModel | null;
}

export function toExecutionView(record: ExecutionRecord): CommandExecution {
  return {
    id: record.id,
    workspace_id: record.workspace_id,
    trigger: record.trigger,
    type: record.type,
    args: record.args,
    status: record.status,
    output: record.output,
    output_truncated: record.output_truncated,
    exit_code: record.exit_code,
    error: record.error,
    run_id: record.run_id,
    thread_id: record.thread_id,
    tool_call_id: record.tool_call_id,
    created_at: record.created_at,
    started_at: record.started_at,
    completed_at: record.completed_at,
  };
}
