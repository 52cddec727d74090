import { LineCounter, parseDocument, stringify, type Document } from 'yaml';
import * as z from 'zod';
import { MAX_JSON_DEPTH, TOO_DEEP_MESSAGE, withinDepthLimit } from '../input/json-depth';
import { locateYamlPath as locate, yamlDepthOver } from '../input/yaml-document';
import { compileJsonSchema } from './json-schema';
import { PROVIDER_NAMES, type ProviderName } from '../../ports/provider-names';
import { type ResolvedModel, resolveModel } from './llm-providers';
import { isMimePattern } from './mime-patterns';
import { TEMPLATE_REFERENCE } from './template-syntax';
import { lazy } from '../lazy';
import { lazySchema } from '../lazy-schema';

/**
 * The configuration of a runnable (`config_content_parsed`, docs/api.md#configurations): the zod schemas
 * of the prompt, flow and agent variants, and `parseRunnableConfig`, which turns YAML or JSON text
 * into the parsed form plus diagnostics. The HTTP API and the editor show the same diagnostics.
 * Unknown fields are kept as written at every level.
 */

export const RUNNABLE_TYPES = ['prompt', 'flow', 'agent'] as const;
export type RunnableType = (typeof RUNNABLE_TYPES)[number];

/** Names usable as `{{name}}`: inputs, step ids, `with` keys. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_-]*$/;
/** Tool names as model vendors accept them. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const STEP_OUTPUT_REFERENCE = /^steps\.([^.]+)\.output(?:\..+)?$/;

/** Agent tool-calling loops stop after this many model turns unless `max_steps` says otherwise. */
export const DEFAULT_AGENT_MAX_STEPS = 10;

/**
 * The zod schemas of a configuration, made on first use (`configSchemas`): made at load, they were ~10 ms of
 * every start, and only requests that read a configuration (or the OpenAPI document) need them.
 */
function makePartSchemas() {
  const identifier = (what: string) => z.string().regex(IDENTIFIER, `${what} must start with a letter or _ and hold only letters, digits, _ and -`);
  const jsonObject = z.record(z.string(), z.unknown());

  const messageSchema = z.looseObject({
    role: z.enum(['system', 'user', 'assistant']),
    content: z.string(),
  });

  /** `system` and `messages`; `{{name}}` in either is filled from the run's embedded resources. */
  const promptSchema = z
    .looseObject({
      system: z.string().optional(),
      messages: z.array(messageSchema).optional(),
    })
    .refine((prompt) => prompt.system !== undefined || (prompt.messages?.length ?? 0) > 0, 'give prompt.system or at least one message');

  const llmSchema = z.looseObject({
    name: z.string().min(1).optional(),
    /** Derived when absent (docs/api.md#configurations); always present in a parsed configuration. */
    provider: z.enum(PROVIDER_NAMES).optional(),
    model: z.string().min(1),
    is_default: z.boolean().optional(),
    params: z
      .looseObject({
        temperature: z.number().min(0).optional(),
        max_tokens: z.int().min(1).optional(),
        top_p: z.number().min(0).max(1).optional(),
      })
      .optional(),
  });

  const llmsSchema = z.array(llmSchema).min(1, 'list at least one model, or leave llms out');

  /** A placeholder (docs/api.md#configurations). `type`, `mime_types` and `required` are filled in when absent. */
  const inputSchema = z.looseObject({
    name: identifier('an input name'),
    description: z.string().optional(),
    type: z.enum(['text', 'file', 'json']).optional(),
    mime_types: z
      .array(z.string().refine(isMimePattern, 'not a MIME type pattern: write type/subtype, e.g. text/plain, image/*, */*'))
      .min(1, 'list at least one MIME type, e.g. */*')
      .optional(),
    required: z.boolean().optional(),
    transforms: z.array(z.unknown()).optional(),
    metadata: z
      .looseObject({
        /** JSON Schema (draft 7) the resource's metadata must satisfy. */
        schema: jsonObject.optional(),
        required: z.boolean().optional(),
      })
      .nullable()
      .optional(),
    /** The documented spelling of `metadata.schema` (docs/api.md#configurations). */
    metadata_schema: jsonObject.nullable().optional(),
  });

  const commonFields = {
    name: z.string().optional(),
    description: z.string().optional(),
    /** Records traces of runs when the run's `telemetry_strategy` is `default`; on unless false. */
    telemetry: z.boolean().optional(),
    inputs: z.array(inputSchema).optional(),
    /** Structured outputs: output name → JSON Schema. */
    schemas: jsonObject.optional(),
  };

  const promptConfigSchema = z.looseObject({
    ...commonFields,
    type: z.literal('prompt').optional(),
    prompt: promptSchema,
    llms: llmsSchema.optional(),
  });

  /**
   * A flow step's transform. Its string fields are templates; a template that is exactly one
   * `{{reference}}` passes the referenced value through unchanged (an object stays an object).
   */
  const transformSchema = z.discriminatedUnion('transform', [
    /** Renders `template`; the output is the text. */
    z.looseObject({ transform: z.literal('template'), template: z.string() }),
    /** Parses the rendered `input` as JSON. */
    z.looseObject({ transform: z.literal('json_parse'), input: z.string() }),
    /** Takes the value at a dot `path` (`a.b.0`) of the JSON value `input`. */
    z.looseObject({ transform: z.literal('pick'), input: z.string(), path: z.string().min(1) }),
  ]);

  /** An inline prompt; without `llms` it uses the flow's. */
  const promptUseSchema = z.looseObject({ prompt: promptSchema, llms: llmsSchema.optional() });
  const runnableUseSchema = z.looseObject({ runnable: z.uuid('a runnable id (UUID)') });
  const runnableIdSchema = z.uuid('expected a runnable id (UUID), {prompt: …}, {runnable: …} or {transform: …}');
  return {
    identifier,
    jsonObject,
    promptSchema,
    llmSchema,
    llmsSchema,
    inputSchema,
    commonFields,
    promptConfigSchema,
    transformSchema,
    promptUseSchema,
    runnableUseSchema,
    runnableIdSchema,
  };
}
type PartSchemas = ReturnType<typeof makePartSchemas>;

export type PromptUse = z.infer<PartSchemas['promptUseSchema']>;
export type RunnableUse = z.infer<PartSchemas['runnableUseSchema']>;
export type TransformUse = z.infer<PartSchemas['transformSchema']>;
export type StepUses = string | PromptUse | RunnableUse | TransformUse;

export function isPromptUse(uses: StepUses): uses is PromptUse {
  return typeof uses === 'object' && 'prompt' in uses;
}
export function isTransformUse(uses: StepUses): uses is TransformUse {
  return typeof uses === 'object' && 'transform' in uses;
}

/** What a step runs, told apart by its key: a runnable id, `{prompt}`, `{runnable}` or `{transform}`. */
function usesVariant(value: unknown): z.ZodType | undefined {
  const { runnableIdSchema, promptUseSchema, runnableUseSchema, transformSchema } = configSchemas().parts;
  if (typeof value === 'string') return runnableIdSchema;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  if ('prompt' in value) return promptUseSchema;
  if ('runnable' in value) return runnableUseSchema;
  if ('transform' in value) return transformSchema;
  return undefined;
}

/** The schemas of a whole configuration (see `makePartSchemas`), with the parts they are made of. */
function makeConfigSchemas() {
  const parts = makePartSchemas();
  const { identifier, jsonObject, promptSchema, llmsSchema, commonFields, promptConfigSchema } = parts;
  const usesSchema = z
    .custom<StepUses>()
    .superRefine((value, context) => {
      if (value === undefined) {
        context.addIssue({ code: 'custom', message: 'is required' });
        return;
      }
      const variant = usesVariant(value);
      if (!variant) {
        context.addIssue({
          code: 'custom',
          message: 'expected a runnable id (UUID), {prompt: …}, {runnable: …} or {transform: …}',
        });
        return;
      }
      const result = variant.safeParse(value, { error: issueMessage });
      for (const issue of result.error?.issues ?? []) context.addIssue({ code: 'custom', message: issue.message, path: issue.path });
    })
    .meta({ description: 'a runnable id (UUID), {prompt, llms?}, {runnable} or {transform, …}' });

  const stepSchema = z.looseObject({
    id: identifier('a step id'),
    description: z.string().optional(),
    uses: usesSchema,
    /** Steps that run first. A `{{steps.ID.output}}` reference adds ID implicitly. */
    needs: z.array(z.string()).optional(),
    /** Inputs of the step: templates over the flow's inputs and earlier steps' outputs. */
    with: jsonObject.optional(),
  });

  const flowConfigSchema = z.looseObject({
    ...commonFields,
    type: z.literal('flow'),
    /** Models of inline prompt steps that name none. */
    llms: llmsSchema.optional(),
    steps: z.array(stepSchema).min(1, 'a flow needs at least one step'),
    /** Id of the step whose output is the flow's output; default: the last step. */
    output: z.string().optional(),
  });

  const toolName = z.string().regex(TOOL_NAME, 'a tool name holds 1 to 64 letters, digits, _ and -');

  const toolSchema = z.discriminatedUnion('type', [
    /** Calls another runnable of the account with the arguments as its inputs. */
    z.looseObject({ type: z.literal('runnable'), runnable_id: z.uuid('a runnable id (UUID)'), name: toolName.optional(), description: z.string().optional() }),
    /** An HTTP call: GET sends the arguments as query parameters, POST as a JSON body. */
    z.looseObject({
      type: z.literal('http'),
      name: toolName,
      description: z.string().optional(),
      method: z.enum(['GET', 'POST']),
      url: z.url({ protocol: /^https?$/, error: 'an http(s) URL' }),
      headers: z.record(z.string(), z.string()).optional(),
      /** JSON Schema (draft 7) of the arguments. */
      parameters: jsonObject.optional(),
    }),
    /** Reads a file of a workspace (the run's own when `workspace_id` is absent). */
    z.looseObject({
      type: z.literal('workspace_file_read'),
      name: toolName.optional(),
      description: z.string().optional(),
      workspace_id: z.uuid('a workspace id (UUID)').optional(),
    }),
  ]);

  const agentConfigSchema = z.looseObject({
    ...commonFields,
    type: z.literal('agent'),
    prompt: promptSchema.optional(),
    /** Shorthand for one model: `model` (optionally `provider/model`) and `provider`. */
    model: z.string().min(1).optional(),
    provider: z.enum(PROVIDER_NAMES).optional(),
    llms: llmsSchema.optional(),
    tools: z.array(toolSchema).optional(),
    max_steps: z.int().min(1).max(100).optional(),
  });

  /** Any variant: for documentation (OpenAPI, editor schemas); parsing dispatches on `type`. */
  const runnableConfigSchema = z.union([promptConfigSchema, flowConfigSchema, agentConfigSchema]).meta({ id: 'RunnableConfig' });
  // Typed as any schema: the configuration types are read from this function's result.
  const variants: Record<RunnableType, z.ZodType> = {
    prompt: promptConfigSchema,
    flow: flowConfigSchema,
    agent: agentConfigSchema,
  };
  return { parts, stepSchema, toolSchema, flowConfigSchema, agentConfigSchema, runnableConfigSchema, variants };
}
const configSchemas = lazy(makeConfigSchemas);
type ConfigSchemas = ReturnType<typeof makeConfigSchemas>;

export type FlowStep = z.infer<ConfigSchemas['stepSchema']>;
export type AgentTool = z.infer<ConfigSchemas['toolSchema']>;
export type PromptConfig = z.infer<PartSchemas['promptConfigSchema']>;
export type FlowConfig = z.infer<ConfigSchemas['flowConfigSchema']>;
export type AgentConfig = z.infer<ConfigSchemas['agentConfigSchema']>;
export type RunnableConfig = PromptConfig | FlowConfig | AgentConfig;
export type LlmConfig = z.infer<PartSchemas['llmSchema']>;
export type InputConfig = z.infer<PartSchemas['inputSchema']>;

/** Any variant: for documentation (OpenAPI, editor schemas); parsing dispatches on `type`. Made on first use. */
export const runnableConfigSchema = lazySchema(() => configSchemas().runnableConfigSchema);

export interface ConfigDiagnostic {
  /** Dot path into the configuration (`llms.0.model`); '' for the whole text. */
  path: string;
  message: string;
  /** Errors make the configuration invalid (400); warnings are only shown in the editor. */
  severity: 'error' | 'warning';
  /** 1-based position in the text, when the path or the syntax error can be located. */
  line?: number;
  column?: number;
}

export interface ParsedRunnableConfig {
  /** The parsed, derived configuration; undefined when any diagnostic is an error. */
  parsed: RunnableConfig | undefined;
  /** From `type`; `prompt` when absent (and when `type` is invalid, so callers always have one). */
  type: RunnableType;
  diagnostics: ConfigDiagnostic[];
  /**
   * Whether a model's provider could be derived only from `enabledProviders`: the result depends on
   * them. When false, any list gives the same result, so a caller may skip reading it.
   */
  usesEnabledProviders: boolean;
}

export interface ParseRunnableConfigOptions {
  /** The account's enabled providers: the last resort for deriving `llms[].provider`. */
  enabledProviders?: readonly string[];
}

type Path = (string | number)[];
type Report = (path: Path, message: string, severity?: ConfigDiagnostic['severity']) => void;
type ResolveModel = (model: string, provider: ProviderName | undefined) => ResolvedModel | undefined;

/**
 * Parses YAML or JSON configuration text (JSON is read as YAML, which it is), validates it against
 * the variant its `type` names and applies the derivations (docs/api.md#configurations): `llms[].provider` and
 * bare `model`, `inputs[].type`, `mime_types` and `required`. Pure: never throws.
 */
export function parseRunnableConfig(text: string, options: ParseRunnableConfigOptions = {}): ParsedRunnableConfig {
  return readRunnableConfig(text).check(options);
}

/** A configuration text read once, to check with more than one set of options. */
export interface ReadRunnableConfig {
  /** `parseRunnableConfig(text, options)`, without reading the text again. */
  check(options?: ParseRunnableConfigOptions): ParsedRunnableConfig;
}

/**
 * Reads the text (the YAML parser: most of `parseRunnableConfig`'s time) once; `check` validates
 * and derives. A caller that learns from the first check that the result depends on the enabled
 * providers checks again with them, at a small part of the cost.
 */
export function readRunnableConfig(text: string): ReadRunnableConfig {
  const lineCounter = new LineCounter();
  const readDiagnostics: ConfigDiagnostic[] = [];
  let document: Document | undefined;
  let firstValue: unknown;
  try {
    document = parseDocument(text, { lineCounter, prettyErrors: false });
    const deepNesting = document.errors.find((error) => error.message.includes('call stack'));
    // The parser reports running out of stack once per nesting level it unwinds: say it once.
    for (const error of deepNesting ? [deepNesting] : document.errors) {
      const { line, col } = lineCounter.linePos(error.pos[0]);
      const message = error === deepNesting ? TOO_DEEP_MESSAGE : error.message;
      readDiagnostics.push({ path: '', message, severity: 'error', line, column: col });
    }
    for (const warning of document.warnings) {
      const { line, col } = lineCounter.linePos(warning.pos[0]);
      readDiagnostics.push({ path: '', message: warning.message, severity: 'warning', line, column: col });
    }
    if (document.errors.length === 0) {
      // One depth limit for every structured input: the node tree first (toJS recurses), then the
      // value (aliases can nest a deep anchor deeper still).
      if (yamlDepthOver(document.contents, MAX_JSON_DEPTH)) readDiagnostics.push({ path: '', message: TOO_DEEP_MESSAGE, severity: 'error', line: 1, column: 1 });
      else {
        firstValue = document.toJS();
        if (!withinDepthLimit(firstValue)) readDiagnostics.push({ path: '', message: TOO_DEEP_MESSAGE, severity: 'error', line: 1, column: 1 });
      }
    }
  } catch (error) {
    // Pathological input (alias bombs past the limit, nesting past the stack) is bad input too.
    readDiagnostics.push({
      path: '',
      message: `the configuration cannot be read: ${(error as Error).message}`,
      severity: 'error',
      ...(document ? locate(document, lineCounter, []) : {}),
    });
  }
  let checks = 0;
  return {
    check: (options = {}) => {
      const diagnostics = [...readDiagnostics];
      if (hasErrors(diagnostics)) return { parsed: undefined, type: 'prompt', diagnostics, usesEnabledProviders: false };
      const report: Report = (path, message, severity = 'error') => {
        diagnostics.push({ path: path.join('.'), message, severity, ...locate(document!, lineCounter, path) });
      };
      // Checking derives in place: each check after the first starts from a fresh value.
      const value = checks++ === 0 ? firstValue : document!.toJS();
      return checkRunnableConfig(value, options, diagnostics, report);
    },
  };
}

function checkRunnableConfig(value: unknown, options: ParseRunnableConfigOptions, diagnostics: ConfigDiagnostic[], report: Report): ParsedRunnableConfig {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    report([], value === null || value === undefined ? 'the configuration is empty: write a mapping such as `prompt: …`' : 'the configuration must be a mapping of fields (name, type, prompt, …)');
    return { parsed: undefined, type: 'prompt', diagnostics, usesEnabledProviders: false };
  }

  const declaredType = (value as Record<string, unknown>).type;
  if (declaredType !== undefined && !(RUNNABLE_TYPES as readonly unknown[]).includes(declaredType)) {
    report(['type'], `type must be one of ${RUNNABLE_TYPES.join(', ')} (or absent for prompt)`);
    return { parsed: undefined, type: 'prompt', diagnostics, usesEnabledProviders: false };
  }
  const type = (declaredType ?? 'prompt') as RunnableType;
  const result = configSchemas().variants[type].safeParse(value, { error: issueMessage });
  if (!result.success) {
    for (const issue of result.error.issues) report(issue.path as Path, issue.message);
    return { parsed: undefined, type, diagnostics, usesEnabledProviders: false };
  }

  const config = result.data as RunnableConfig;
  checkAndDeriveInputs(config, report);
  const enabledProviders = options.enabledProviders ?? [];
  let usesEnabledProviders = false;
  const resolve: ResolveModel = (model, provider) => {
    const inferred = resolveModel(model, provider, []);
    if (inferred) return inferred;
    usesEnabledProviders = true;
    return resolveModel(model, provider, enabledProviders);
  };
  switch (type) {
    case 'prompt': {
      const prompt = config as PromptConfig;
      if (prompt.llms) deriveLlms(prompt.llms, ['llms'], resolve, report);
      else report(['prompt'], 'no llms: add one (e.g. `llms: [{model: gpt-4o}]`) before running this prompt', 'warning');
      checkTemplates(prompt.prompt, ['prompt'], inputNames(config), undefined, report);
      break;
    }
    case 'flow':
      checkFlow(config as FlowConfig, resolve, report);
      break;
    case 'agent':
      checkAgent(config as AgentConfig, resolve, report);
      break;
  }
  return { parsed: hasErrors(diagnostics) ? undefined : config, type, diagnostics, usesEnabledProviders };
}

/** YAML for a configuration given as an object (create with `config_content_parsed`). */
export function formatRunnableConfig(config: Record<string, unknown>): string {
  return stringify(config);
}

/** The JSON Schema a placeholder's metadata must satisfy (`metadata.schema` or `metadata_schema`). */
export function metadataSchemaOf(input: InputConfig): Record<string, unknown> | undefined {
  return input.metadata?.schema ?? input.metadata_schema ?? undefined;
}

/** The model a prompt uses: the one marked `is_default`, else the first. */
export function defaultLlm(llms: readonly LlmConfig[] | undefined): LlmConfig | undefined {
  return llms?.find((llm) => llm.is_default) ?? llms?.[0];
}

/** Steps a step waits for: its `needs` plus every step its templates reference. */
export function stepDependencies(step: FlowStep): string[] {
  const dependencies = new Set(step.needs ?? []);
  for (const reference of templateReferences(step)) {
    const stepId = STEP_OUTPUT_REFERENCE.exec(reference.name)?.[1];
    if (stepId !== undefined) dependencies.add(stepId);
  }
  return [...dependencies];
}

function hasErrors(diagnostics: ConfigDiagnostic[]): boolean {
  return diagnostics.some((diagnostic) => diagnostic.severity === 'error');
}

/** Zod says "expected string, received undefined" for a missing field; say what to fix instead. */
function issueMessage(issue: { code?: string; input?: unknown }): string | undefined {
  return issue.code === 'invalid_type' && issue.input === undefined ? 'is required' : undefined;
}

function inputNames(config: RunnableConfig): Set<string> {
  return new Set((config.inputs ?? []).map((input) => input.name));
}

/** Unique names, compilable metadata schemas; fills in `type`, `mime_types` and `required`. */
function checkAndDeriveInputs(config: RunnableConfig, report: Report): void {
  const seen = new Map<string, number>();
  config.inputs?.forEach((input, index) => {
    const path = ['inputs', index];
    const earlier = seen.get(input.name);
    if (earlier !== undefined) report([...path, 'name'], `duplicate input name '${input.name}' (also inputs.${earlier}); names must be unique`);
    else seen.set(input.name, index);
    if (input.metadata?.schema) checkJsonSchema(input.metadata.schema, [...path, 'metadata', 'schema'], report);
    if (input.metadata_schema) checkJsonSchema(input.metadata_schema, [...path, 'metadata_schema'], report);
    input.mime_types ??= [defaultMimeType(input.type)];
    input.type ??= inputType(input.mime_types);
    input.required ??= true;
  });
}

function defaultMimeType(type: InputConfig['type']): string {
  return type === 'text' ? 'text/*' : type === 'json' ? 'application/json' : '*/*';
}

/** docs/api.md#configurations: `json` when every MIME type is application/json, `text` when every one is text/*, else `file`. */
function inputType(mimeTypes: readonly string[]): 'text' | 'file' | 'json' {
  if (mimeTypes.every((pattern) => pattern.toLowerCase() === 'application/json')) return 'json';
  if (mimeTypes.every((pattern) => pattern.toLowerCase().startsWith('text/'))) return 'text';
  return 'file';
}

function checkJsonSchema(schema: Record<string, unknown>, path: Path, report: Report): void {
  try {
    compileJsonSchema(schema);
  } catch (error) {
    report(path, `not a valid JSON Schema (draft 7): ${(error as Error).message}`);
  }
}

/** At most one default, unique names; derives each `provider` and bare `model`. */
function deriveLlms(llms: LlmConfig[], path: Path, resolve: ResolveModel, report: Report): void {
  const defaults = llms.flatMap((llm, index) => (llm.is_default ? [index] : []));
  if (defaults.length > 1) report([...path, defaults[1]!, 'is_default'], `only one model may be the default (also ${path.join('.')}.${defaults[0]})`);
  const names = new Map<string, number>();
  llms.forEach((llm, index) => {
    if (llm.name !== undefined) {
      const earlier = names.get(llm.name);
      if (earlier !== undefined) report([...path, index, 'name'], `duplicate model name '${llm.name}' (also ${path.join('.')}.${earlier})`);
      else names.set(llm.name, index);
    }
    const resolved = resolve(llm.model, llm.provider);
    if (!resolved) {
      report([...path, index, 'provider'], missingProviderMessage(llm.model));
      return;
    }
    llm.provider = resolved.provider;
    llm.model = resolved.model;
  });
}

function missingProviderMessage(model: string): string {
  return `set provider: the vendor of model '${model}' cannot be inferred; name one of ${PROVIDER_NAMES.join(', ')} (or write provider/model)`;
}

/** Template strings of a value, with their paths: every string, at any depth. */
function templateReferences(value: unknown, path: Path = []): { name: string; path: Path }[] {
  if (typeof value === 'string') return [...value.matchAll(TEMPLATE_REFERENCE)].map((match) => ({ name: match[1]!, path }));
  if (Array.isArray(value)) return value.flatMap((item, index) => templateReferences(item, [...path, index]));
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).flatMap(([key, item]) => templateReferences(item, [...path, key]));
  }
  return [];
}

/**
 * `{{steps.ID.output}}` must name a step of the flow (`stepIds`; none outside flows);
 * `{{name}}` (or `{{name.field}}`) should name a declared input: a warning, since the text may
 * mean the braces literally.
 */
function checkTemplates(value: unknown, path: Path, names: ReadonlySet<string>, stepIds: ReadonlySet<string> | undefined, report: Report): void {
  for (const reference of templateReferences(value, path)) {
    const stepId = STEP_OUTPUT_REFERENCE.exec(reference.name)?.[1];
    if (stepId !== undefined && stepIds) {
      if (!stepIds.has(stepId)) report(reference.path, `{{${reference.name}}} names no step '${stepId}'; steps are ${[...stepIds].join(', ')}`);
      continue;
    }
    const base = reference.name.split('.')[0]!;
    if (!names.has(base)) {
      report(reference.path, `{{${reference.name}}} names no declared input; add '${base}' to inputs or it stays unfilled`, 'warning');
    }
  }
}

function checkFlow(flow: FlowConfig, resolve: ResolveModel, report: Report): void {
  if (flow.llms) deriveLlms(flow.llms, ['llms'], resolve, report);
  const ids = new Map<string, number>();
  flow.steps.forEach((step, index) => {
    const earlier = ids.get(step.id);
    if (earlier !== undefined) report(['steps', index, 'id'], `duplicate step id '${step.id}' (also steps.${earlier}); ids must be unique`);
    else ids.set(step.id, index);
  });
  const stepIds = new Set(ids.keys());
  const inputs = inputNames(flow);
  flow.steps.forEach((step, index) => {
    const path = ['steps', index];
    step.needs?.forEach((need, needIndex) => {
      if (need === step.id) report([...path, 'needs', needIndex], `step '${step.id}' cannot need itself`);
      else if (!stepIds.has(need)) report([...path, 'needs', needIndex], `needs names no step '${need}'; steps are ${[...stepIds].join(', ')}`);
    });
    checkTemplates(step.with, [...path, 'with'], inputs, stepIds, report);
    const uses = step.uses;
    if (isPromptUse(uses)) {
      if (uses.llms) deriveLlms(uses.llms, [...path, 'uses', 'llms'], resolve, report);
      else if (!flow.llms) report([...path, 'uses'], 'no llms for this prompt step: add llms to the step or to the flow before running it', 'warning');
      const promptNames = new Set([...inputs, ...Object.keys(step.with ?? {})]);
      checkTemplates(uses.prompt, [...path, 'uses', 'prompt'], promptNames, stepIds, report);
    } else if (isTransformUse(uses)) {
      checkTemplates(uses, [...path, 'uses'], inputs, stepIds, report);
    }
  });
  if (flow.output !== undefined && !stepIds.has(flow.output)) report(['output'], `output names no step '${flow.output}'; steps are ${[...stepIds].join(', ')}`);
  const cycle = findCycle(flow.steps);
  if (cycle) report(['steps', ids.get(cycle[0]!)!, 'needs'], `steps form a cycle: ${cycle.join(' → ')}; a flow must be a DAG`);
}

/** A dependency cycle among the steps, as ids from a step back to itself; undefined if none. */
function findCycle(steps: readonly FlowStep[]): string[] | undefined {
  const dependencies = new Map(steps.map((step) => [step.id, stepDependencies(step).filter((id) => id !== step.id)]));
  const state = new Map<string, 'visiting' | 'done'>();
  const trail: string[] = [];
  const visit = (id: string): string[] | undefined => {
    if (state.get(id) === 'done' || !dependencies.has(id)) return undefined;
    if (state.get(id) === 'visiting') return [...trail.slice(trail.indexOf(id)), id];
    state.set(id, 'visiting');
    trail.push(id);
    for (const dependency of dependencies.get(id)!) {
      const cycle = visit(dependency);
      if (cycle) return cycle;
    }
    trail.pop();
    state.set(id, 'done');
    return undefined;
  };
  for (const step of steps) {
    const cycle = visit(step.id);
    if (cycle) return cycle;
  }
  return undefined;
}

function checkAgent(agent: AgentConfig, resolve: ResolveModel, report: Report): void {
  if (agent.model !== undefined && agent.llms) report(['model'], 'give model or llms, not both');
  else if (agent.model !== undefined) {
    const resolved = resolve(agent.model, agent.provider);
    if (resolved) Object.assign(agent, resolved);
    else report(['provider'], missingProviderMessage(agent.model));
  } else if (agent.llms) deriveLlms(agent.llms, ['llms'], resolve, report);
  else report([], 'no model: set model (e.g. `model: gpt-4o`) or llms before running this agent', 'warning');
  if (agent.prompt) checkTemplates(agent.prompt, ['prompt'], inputNames(agent), undefined, report);
  const names = new Map<string, number>();
  agent.tools?.forEach((tool, index) => {
    if (tool.type === 'http' && tool.parameters) checkJsonSchema(tool.parameters, ['tools', index, 'parameters'], report);
    if (tool.name === undefined) return;
    const earlier = names.get(tool.name);
    if (earlier !== undefined) report(['tools', index, 'name'], `duplicate tool name '${tool.name}' (also tools.${earlier}); names must be unique`);
    else names.set(tool.name, index);
  });
}

