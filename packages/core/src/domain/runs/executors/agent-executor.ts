import type { JsonSchema, ModelMessage, ModelTool, ToolCallPart, ToolResultPart } from '../../../ports/model-gateway';
import { type AgentConfig, type AgentTool, DEFAULT_AGENT_MAX_STEPS } from '../../runnables/config-schema';
import { describeFailure, RunFailure } from '../run-failure';
import type { Execution, ModelChoice, StepOutcome } from './execution-types';
import { modelOf, renderPrompt, textOutcome } from './prompt-executor';
import type { Scope } from './templates';

/** A tool as the loop sees it: what the model is told, and how a call runs. */
interface LoopTool {
  definition: ModelTool;
  invoke(execution: Execution, input: Record<string, unknown>): Promise<{ output: unknown; isError?: boolean }>;
}

/** Agent HTTP tools wait this long for an answer. */
const HTTP_TOOL_TIMEOUT_MS = 30_000;

const ANY_OBJECT: JsonSchema = { type: 'object', additionalProperties: true };

/**
 * Runs an agent as a tool-calling loop: the model is called with the tools; each tool call it
 * makes runs (calls of one turn concurrently) and its result goes back to the model; the loop ends
 * when the model answers without calling a tool. That answer is the output. A model still calling
 * tools after `max_steps` turns fails the run.
 */
export async function executeAgent(execution: Execution, agent: AgentConfig, scope: Scope): Promise<StepOutcome> {
  const model = agentModel(agent);
  const tools = await loopTools(execution, agent.tools ?? []);
  const { system, messages } = renderPrompt(agent.prompt ?? {}, scope);
  if (messages.length === 0) throw new RunFailure('no_prompt', 'the agent has no task: add prompt.messages (e.g. [{role: user, content: …}])');
  const conversation: ModelMessage[] = [...messages];
  const maxSteps = agent.max_steps ?? DEFAULT_AGENT_MAX_STEPS;
  const definitions = [...tools.values()].map((tool) => tool.definition);
  for (let turn = 1; turn <= maxSteps; turn++) {
    const name = `turn ${turn}`;
    const response = await execution.telemetry.step(name, 'agent_turn', (telemetry) =>
      execution.within(telemetry).callModel(name, model, { system, messages: conversation, ...(definitions.length > 0 ? { tools: definitions } : {}) }),
    );
    if (response.toolCalls.length === 0) return textOutcome(response.text);
    const calls: ToolCallPart[] = response.toolCalls.map((call) => ({ type: 'tool-call', ...call }));
    conversation.push({ role: 'assistant', content: [...(response.text ? [{ type: 'text' as const, text: response.text }] : []), ...calls] });
    const results = await Promise.all(calls.map((call) => runToolCall(execution, tools, call)));
    conversation.push({ role: 'tool', content: results });
  }
  throw new RunFailure(
    'max_steps_exceeded',
    `the agent was still calling tools after max_steps (${maxSteps}) model turns; raise max_steps or make the task clearer`,
  );
}

function agentModel(agent: AgentConfig): ModelChoice {
  if (agent.model === undefined) return modelOf(agent.llms, 'the agent');
  if (!agent.provider) throw new RunFailure('no_model', `the agent's model '${agent.model}' names no provider; set provider`);
  return { provider: agent.provider, model: agent.model, params: agent.params as Record<string, unknown> | undefined };
}

/** Runs one tool call; a failing tool answers the model with the error, an abort ends the run. */
async function runToolCall(execution: Execution, tools: Map<string, LoopTool>, call: ToolCallPart): Promise<ToolResultPart> {
  const answer = (output: unknown, isError = false): ToolResultPart => ({ type: 'tool-result', toolCallId: call.toolCallId, toolName: call.toolName, output, ...(isError ? { isError } : {}) });
  const tool = tools.get(call.toolName);
  if (!tool) return answer(`there is no tool named '${call.toolName}'; use one of ${[...tools.keys()].join(', ')}`, true);
  const input = call.input !== null && typeof call.input === 'object' && !Array.isArray(call.input) ? (call.input as Record<string, unknown>) : {};
  try {
    const result = await execution.telemetry.step(`tool ${call.toolName}`, 'tool', (telemetry) => tool.invoke(execution.within(telemetry), input));
    return answer(result.output, result.isError);
  } catch (error) {
    execution.signal.throwIfAborted();
    return answer(describeFailure(error).message, true);
  }
}

async function loopTools(execution: Execution, configured: readonly AgentTool[]): Promise<Map<string, LoopTool>> {
  const tools = new Map<string, LoopTool>();
  for (const [index, tool] of configured.entries()) {
    const loopTool = await toLoopTool(execution, tool, index);
    tools.set(loopTool.definition.name, loopTool);
  }
  return tools;
}

async function toLoopTool(execution: Execution, tool: AgentTool, index: number): Promise<LoopTool> {
  switch (tool.type) {
    case 'runnable':
      return runnableTool(execution, tool, index);
    case 'http':
      return httpTool(tool);
    case 'workspace_file_read':
      throw new RunFailure('tool_unavailable', `tools.${index}: workspace_file_read tools need workspaces, which this server does not host`);
  }
}

/** Another runnable of the account; its declared text and JSON inputs are the tool's parameters. */
async function runnableTool(execution: Execution, tool: Extract<AgentTool, { type: 'runnable' }>, index: number): Promise<LoopTool> {
  const runnable = await execution.findRunnable(tool.runnable_id);
  if (!runnable) throw new RunFailure('runnable_not_found', `tools.${index}: runnable ${tool.runnable_id} does not exist in this account`);
  const inputs = (runnable.config_content_parsed.inputs ?? []).filter((input) => input.type !== 'file');
  const inputSchema: JsonSchema = {
    type: 'object',
    properties: Object.fromEntries(
      inputs.map((input) => [input.name, { ...(input.type === 'text' ? { type: 'string' } : {}), ...(input.description ? { description: input.description } : {}) }]),
    ),
    required: inputs.filter((input) => input.required).map((input) => input.name),
  };
  return {
    definition: {
      name: tool.name ?? toolNameOf(runnable.name, tool.runnable_id),
      description: tool.description ?? runnable.description ?? `Runs the ${runnable.config_content_type} '${runnable.name}'`,
      inputSchema,
    },
    invoke: async (toolExecution, input) => ({ output: (await toolExecution.runRunnable(tool.runnable_id, input)).value ?? null }),
  };
}

/** A runnable's name as a tool name vendors accept (letters, digits, _ and -, at most 64). */
function toolNameOf(name: string, id: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 64);
  return cleaned || `runnable_${id.slice(0, 8)}`;
}

/** GET sends the arguments as query parameters, POST as a JSON body; the answer's status and body go back. */
function httpTool(tool: Extract<AgentTool, { type: 'http' }>): LoopTool {
  return {
    definition: { name: tool.name, description: tool.description ?? `${tool.method} ${tool.url}`, inputSchema: tool.parameters ?? ANY_OBJECT },
    invoke: async (execution, input) => {
      const url = new URL(tool.url);
      if (tool.method === 'GET') {
        for (const [key, value] of Object.entries(input)) url.searchParams.set(key, typeof value === 'string' ? value : JSON.stringify(value));
      }
      try {
        const response = await execution.http({
          url: url.toString(),
          method: tool.method,
          headers: { ...tool.headers, ...(tool.method === 'POST' ? { 'content-type': 'application/json' } : {}) },
          ...(tool.method === 'POST' ? { body: JSON.stringify(input) } : {}),
          timeoutMs: HTTP_TOOL_TIMEOUT_MS,
        });
        return { output: { status: response.status, body: parseBody(response.bodyText) }, isError: response.status >= 400 };
      } catch (error) {
        execution.signal.throwIfAborted();
        return { output: `the request failed: ${(error as Error).message}`, isError: true };
      }
    },
  };
}

function parseBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
