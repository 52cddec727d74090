import type { FilePart, JsonSchema, ModelMessage, ModelResponse, TextPart } from '../../../ports/model-gateway';
import { defaultLlm, type LlmConfig } from '../../runnables/config-schema';
import { RunFailure } from '../run-failure';
import type { RunOutput } from '../run-record';
import type { Execution, ModelChoice, ModelPrompt, StepOutcome } from './execution-types';
import { referencedFiles, renderParts, renderText, type Scope } from './templates';

/** The prompt part of a configuration: `system` and `messages`, both templates. */
export interface PromptTemplate {
  system?: string;
  messages?: { role: string; content: string }[];
}

export interface PromptSpec {
  prompt: PromptTemplate;
  llms?: LlmConfig[];
  /** Structured outputs: output name → JSON Schema. */
  schemas?: Record<string, unknown>;
}

/** The name of a prompt's text output when it declares no structured outputs. */
export const DEFAULT_OUTPUT_NAME = 'output';

/** Tool and schema names vendors accept. */
const VENDOR_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Runs a prompt: fills its placeholders from `scope`, calls the default model (`is_default`, else
 * the first), and answers a text output, or one `object_value` output per entry of `schemas`.
 */
export async function executePrompt(execution: Execution, spec: PromptSpec, scope: Scope, step: string): Promise<StepOutcome> {
  const model = modelOf(spec.llms, step);
  const structured = structuredOutputs(spec.schemas);
  const response = await execution.callModel(step, model, {
    ...renderPrompt(spec.prompt, scope),
    ...(structured ? { responseSchema: structured.responseSchema } : {}),
  });
  return structured ? structured.outcome(response) : textOutcome(response.text);
}

/** The configured default model; a prompt without one cannot run. */
export function modelOf(llms: readonly LlmConfig[] | undefined, step: string): ModelChoice {
  const llm = defaultLlm(llms);
  if (!llm) throw new RunFailure('no_model', `${step} names no model: add llms (e.g. [{model: gpt-4o}]) to the configuration`);
  if (!llm.provider) throw new RunFailure('no_model', `${step}: model '${llm.model}' names no provider; set provider`);
  return { provider: llm.provider, model: llm.model, params: llm.params };
}

/**
 * System text and messages with the placeholders filled. Files become content parts of their MIME
 * type in user messages; a file referenced from the system text or an assistant message (which
 * carry only text) is named there and attached to the first user message.
 */
export function renderPrompt(prompt: PromptTemplate, scope: Scope): Pick<ModelPrompt, 'system' | 'messages'> {
  const systemTexts = prompt.system === undefined ? [] : [renderText(prompt.system, scope)];
  const attachments: FilePart[] = prompt.system === undefined ? [] : referencedFiles(prompt.system, scope).map((file) => file.toPart());
  const messages: ModelMessage[] = [];
  for (const message of prompt.messages ?? []) {
    if (message.role === 'system') {
      systemTexts.push(renderText(message.content, scope));
      attachments.push(...referencedFiles(message.content, scope).map((file) => file.toPart()));
    } else if (message.role === 'assistant') {
      messages.push({ role: 'assistant', content: renderText(message.content, scope) });
      attachments.push(...referencedFiles(message.content, scope).map((file) => file.toPart()));
    } else {
      messages.push({ role: 'user', content: renderParts(message.content, scope) });
    }
  }
  if (attachments.length > 0) {
    const firstUser = messages.findIndex((message) => message.role === 'user');
    if (firstUser < 0) messages.unshift({ role: 'user', content: attachments });
    else messages[firstUser] = { role: 'user', content: [...attachments, ...(messages[firstUser]!.content as (TextPart | FilePart)[])] };
  }
  return {
    ...(systemTexts.length > 0 ? { system: systemTexts.join('\n\n') } : {}),
    messages: messages.map(simplify),
  };
}

/** A user message of one text part is sent as plain text, as vendors' own examples do. */
function simplify(message: ModelMessage): ModelMessage {
  if (message.role !== 'user' || typeof message.content === 'string') return message;
  const [only, ...rest] = message.content;
  if (rest.length === 0 && only?.type === 'text') return { role: 'user', content: only.text };
  return message.content.length === 0 ? { role: 'user', content: '' } : message;
}

export function textOutcome(text: string, name = DEFAULT_OUTPUT_NAME): StepOutcome {
  return { outputs: [{ name, mime_type: 'text/plain', text_value: text }], value: text };
}

/** An output for any value: text as text, anything else as a JSON `object_value`. */
export function outputOf(name: string, value: unknown): RunOutput {
  return typeof value === 'string'
    ? { name, mime_type: 'text/plain', text_value: value }
    : { name, mime_type: 'application/json', object_value: value ?? null };
}

interface StructuredOutputs {
  responseSchema: NonNullable<ModelPrompt['responseSchema']>;
  outcome(response: ModelResponse): StepOutcome;
}

/**
 * One schema is asked for as it is; several are asked for as one object with a property per
 * output, and the answer is split into one output each.
 */
function structuredOutputs(schemas: Record<string, unknown> | undefined): StructuredOutputs | undefined {
  const entries = Object.entries(schemas ?? {});
  if (entries.length === 0) return undefined;
  if (entries.length === 1) {
    const [name, schema] = entries[0]!;
    return {
      responseSchema: { schema: schema as JsonSchema, ...(VENDOR_NAME.test(name) ? { name } : {}) },
      outcome: (response) => ({ outputs: [{ name, mime_type: 'application/json', object_value: response.object ?? null }], value: response.object }),
    };
  }
  const combined: JsonSchema = {
    type: 'object',
    properties: Object.fromEntries(entries),
    required: entries.map(([name]) => name),
    additionalProperties: false,
  };
  return {
    responseSchema: { schema: combined, name: 'outputs' },
    outcome: (response) => {
      const object = (response.object ?? {}) as Record<string, unknown>;
      return {
        outputs: entries.map(([name]) => ({ name, mime_type: 'application/json', object_value: object[name] ?? null })),
        value: object,
      };
    },
  };
}
