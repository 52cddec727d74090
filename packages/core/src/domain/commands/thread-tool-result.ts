import type { Thread, UIMessage, UIMessagePart } from '../threads/thread-schemas';
import type { ExecutionRecord } from './execution-record';

/**
 * A finished execution as the result of the thread's tool call `tool_call_id` (AI SDK UIMessage
 * tool parts, docs/api.md#commands): the part holding that call gets state `output-available`
 * with the output, or `output-error` with the error; when no message holds the call, an assistant
 * message with a `dynamic-tool` part named after the trigger is appended.
 */
export function withToolResult(thread: Thread, execution: ExecutionRecord): Thread {
  const toolCallId = execution.tool_call_id!;
  const result =
    execution.status === 'succeeded'
      ? { state: 'output-available', output: execution.output }
      : { state: 'output-error', errorText: errorText(execution) };
  let found = false;
  const messages = thread.messages.map((message) => {
    if (!message.parts.some((part) => isCall(part, toolCallId))) return message;
    found = true;
    return { ...message, parts: message.parts.map((part) => (isCall(part, toolCallId) ? ({ ...part, ...result } as UIMessagePart) : part)) };
  });
  if (!found) {
    const message: UIMessage = {
      id: `command-execution-${execution.id}`,
      role: 'assistant',
      parts: [{ type: 'dynamic-tool', toolName: execution.trigger, toolCallId, input: { args: execution.args }, ...result }],
    };
    messages.push(message);
  }
  return { ...thread, messages };
}

function isCall(part: UIMessagePart, toolCallId: string): boolean {
  return 'toolCallId' in part && part.toolCallId === toolCallId;
}

function errorText(execution: ExecutionRecord): string {
  const message = execution.error?.message ?? `the execution ${execution.status}`;
  return execution.output === '' ? message : `${message}\n${execution.output}`;
}
