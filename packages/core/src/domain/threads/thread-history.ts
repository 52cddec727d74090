import type { FilePart, ModelMessage, TextPart, ToolCallPart, ToolResultPart } from '../../ports/model-gateway';
import type { UIMessage } from './thread-schemas';

/**
 * A thread's UI messages as the model gateway's messages: system texts become the system prompt,
 * user text and inline files (`data:` URLs) stay, assistant text and answered tool calls stay.
 * Reasoning, sources, data parts and tool calls without a result are left out: the vendors take
 * no such input (a call without its result would be refused). Messages left empty are dropped.
 */
export function toModelConversation(messages: readonly UIMessage[]): { system: string | undefined; messages: ModelMessage[] } {
  const system: string[] = [];
  const converted: ModelMessage[] = [];
  for (const message of messages) {
    if (message.role === 'system') {
      system.push(...texts(message));
    } else if (message.role === 'user') {
      const content: (TextPart | FilePart)[] = [];
      for (const part of message.parts) {
        if (part.type === 'text' && typeof part.text === 'string' && part.text !== '') content.push({ type: 'text', text: part.text });
        if (part.type === 'file') {
          const file = inlineFile(part as { url: string; mediaType: string; filename?: string });
          if (file) content.push(file);
        }
      }
      if (content.length > 0) converted.push({ role: 'user', content });
    } else {
      const content: (TextPart | ToolCallPart)[] = [];
      const results: ToolResultPart[] = [];
      for (const part of message.parts) {
        if (part.type === 'text' && typeof part.text === 'string' && part.text !== '') content.push({ type: 'text', text: part.text });
        const tool = answeredTool(part);
        if (tool) {
          content.push({ type: 'tool-call', toolCallId: tool.toolCallId, toolName: tool.toolName, input: tool.input });
          results.push({ type: 'tool-result', toolCallId: tool.toolCallId, toolName: tool.toolName, output: tool.output, isError: tool.isError });
        }
      }
      if (content.length > 0) converted.push({ role: 'assistant', content });
      if (results.length > 0) converted.push({ role: 'tool', content: results });
    }
  }
  return { system: system.length > 0 ? system.join('\n\n') : undefined, messages: converted };
}

/** The texts of a message's text parts. */
export function texts(message: Pick<UIMessage, 'parts'>): string[] {
  return message.parts.flatMap((part) => (part.type === 'text' && typeof part.text === 'string' ? [part.text] : []));
}

function inlineFile(part: { url: string; mediaType: string; filename?: string }): FilePart | undefined {
  const match = /^data:[^;,]*;base64,(.*)$/s.exec(part.url);
  if (!match) return undefined;
  try {
    const binary = atob(match[1]!);
    const data = Uint8Array.from(binary, (char) => char.charCodeAt(0));
    return { type: 'file', mediaType: part.mediaType, data, ...(part.filename ? { filename: part.filename } : {}) };
  } catch {
    return undefined;
  }
}

/** A tool part (`tool-<name>` or `dynamic-tool`) whose call has an output or an error. */
function answeredTool(
  part: UIMessage['parts'][number],
): { toolCallId: string; toolName: string; input: unknown; output: unknown; isError: boolean } | undefined {
  const record = part as Record<string, unknown>;
  const toolName = part.type === 'dynamic-tool' ? record.toolName : part.type.startsWith('tool-') ? part.type.slice('tool-'.length) : undefined;
  if (typeof toolName !== 'string' || typeof record.toolCallId !== 'string') return undefined;
  if (record.state === 'output-available') return { toolCallId: record.toolCallId, toolName, input: record.input, output: record.output, isError: false };
  if (record.state === 'output-error') return { toolCallId: record.toolCallId, toolName, input: record.input, output: record.errorText, isError: true };
  return undefined;
}
