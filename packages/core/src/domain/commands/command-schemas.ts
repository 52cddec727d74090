import * as z from 'zod';
import { pageQueryFields, decimalQueryInteger } from '../input/page-query';
import { TEMPLATE_REFERENCE } from '../runnables/template-syntax';
import { threadIdSchema } from '../threads/thread-schemas';
import { modelChoiceSchema } from '../workspaces/workspace-config';
import { lazy } from '../lazy';
import { lazySchema } from '../lazy-schema';

/**
 * Shapes of commands and their executions (docs/api.md#commands): what a command file holds, what
 * the API accepts and answers. The router validates with them and the OpenAPI document shows them.
 */

export const COMMAND_TYPES = ['prompt', 'runnable', 'process', 'shell'] as const;
export type CommandType = (typeof COMMAND_TYPES)[number];

export const EXECUTION_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

/** A trigger names a command in its route and its file (`.runloom/commands/<trigger>.yaml`). */
export const TRIGGER_PATTERN = /^[a-z0-9]+(?:[-_][a-z0-9]+)*$/;
const TRIGGER_RULE = 'a trigger is a slug: lowercase letters and digits, words joined by single - or _ (e.g. git-commit), at most 64 characters';
export const triggerSchema = lazy(() => z.string().max(64, TRIGGER_RULE).regex(TRIGGER_PATTERN, TRIGGER_RULE).describe('slug naming the command'));

const CATEGORY_RULE = 'a category is a slug: lowercase letters and digits, words joined by single - or _, at most 64 characters';
export const categorySchema = lazy(() => z.string().max(64, CATEGORY_RULE).regex(TRIGGER_PATTERN, CATEGORY_RULE));

/** Shell command bounds: the default and the most a command may ask for. */
export const DEFAULT_TIMEOUT_SECONDS = 300;
export const MAX_TIMEOUT_SECONDS = 24 * 3600;
export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;
export const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;

/** A model as `{provider, model}`: the execute request's, the command's or the workspace's default. */
export type CommandModel = z.output<typeof modelChoiceSchema>;

const NO_NUL = (value: string): boolean => !value.includes('\0');

const declaredArgSchema = lazySchema(() =>
  z.object({
    name: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'an arg name is a letter or _ followed by letters, digits or _ (at most 64), as {{name}} in a template'),
    description: z.string().max(2000).default(''),
    required: z.boolean().default(false),
    default: z.string().max(100_000).refine(NO_NUL, 'default must not contain NUL').optional().describe('used when the arg is not given'),
  }),
);
export type DeclaredArg = z.output<typeof declaredArgSchema>;

/** The definition fields every command has, whatever its type. */
const definitionFields = lazy(() => ({
  name: z.string().min(1, 'name must not be empty').max(200).optional().describe('defaults to the trigger'),
  description: z.string().max(2000).default(''),
  type: z.enum(COMMAND_TYPES, { error: `type must be one of ${COMMAND_TYPES.join(', ')}` }),
  category: categorySchema().default('general'),
  template: z.string().min(1, 'template must not be empty').max(100_000).optional().describe('type prompt: the prompt, with {{arg}} placeholders'),
  runnable_id: z.string().min(1).max(200).optional().describe('type runnable: the runnable to run; args fill its inputs by name'),
  process_id: z.string().min(1).max(200).optional().describe('type process: the process whose run to create and start'),
  argv: z
    .array(z.string().max(4096).refine(NO_NUL, 'argv elements must not contain NUL'))
    .min(1, 'argv needs at least the program')
    .max(64)
    .refine((argv) => argv[0] !== '', 'argv[0] (the program) must not be empty')
    .optional()
    .describe('type shell: the program and its arguments, run without a shell; args are appended as further elements'),
  args: z.array(declaredArgSchema).max(32, 'at most 32 args').default([]).describe('declared args, given positionally on execute'),
  model: modelChoiceSchema.optional().describe('type prompt: the model, unless the execute request names one'),
  timeout_seconds: z.int().min(1).max(MAX_TIMEOUT_SECONDS).optional().describe(`type shell: stopped after this long (default ${DEFAULT_TIMEOUT_SECONDS})`),
  max_output_bytes: z.int().min(1).max(MAX_OUTPUT_BYTES).optional().describe(`type shell: output kept (default ${DEFAULT_MAX_OUTPUT_BYTES}); the rest is dropped`),
}));

/** The field each type needs. */
const TYPE_FIELD = { prompt: 'template', runnable: 'runnable_id', process: 'process_id', shell: 'argv' } as const satisfies Record<CommandType, string>;
const TYPE_FIELDS = Object.values(TYPE_FIELD);

/** What a command file holds and the service stores: the definition, without usage. */
export const commandDefinitionSchema = lazySchema(() =>
  z
    .object({ trigger: triggerSchema(), ...definitionFields() })
    .superRefine((command, context) => {
      const field = TYPE_FIELD[command.type];
      if (command[field] === undefined) context.addIssue({ code: 'custom', path: [field], message: `a ${command.type} command needs ${field}` });
      const names = command.args.map((arg) => arg.name);
      names.forEach((name, index) => {
        if (names.indexOf(name) !== index) context.addIssue({ code: 'custom', path: ['args', index, 'name'], message: `arg '${name}' is declared twice` });
      });
      const firstOptional = command.args.findIndex((arg) => !arg.required);
      command.args.forEach((arg, index) => {
        if (arg.required && firstOptional >= 0 && index > firstOptional) {
          context.addIssue({ code: 'custom', path: ['args', index, 'required'], message: 'args are positional: required args must come before optional ones' });
        }
      });
      if (command.type === 'prompt' && command.template !== undefined) {
        const unknown = [...command.template.matchAll(TEMPLATE_REFERENCE)].map((match) => match[1]!).filter((reference) => !names.includes(reference));
        if (unknown.length > 0) {
          context.addIssue({ code: 'custom', path: ['template'], message: `the template names undeclared args: ${[...new Set(unknown)].join(', ')}; declare them in args` });
        }
      }
    })
    .transform((command) => {
      // Only the field of its type is kept, so a command that changed type carries nothing stale.
      const kept = { ...command, name: command.name ?? command.trigger };
      for (const field of TYPE_FIELDS) if (field !== TYPE_FIELD[command.type]) delete kept[field];
      if (command.type !== 'shell') {
        delete kept.timeout_seconds;
        delete kept.max_output_bytes;
      }
      if (command.type !== 'prompt') delete kept.model;
      return kept;
    }),
);
export type CommandDefinition = z.output<typeof commandDefinitionSchema>;

/** `POST …/commands`: the definition (the router checks the shape, the service the rules). */
export const createCommandSchema = lazySchema(() =>
  z.object({ trigger: triggerSchema(), ...definitionFields() }).meta({
    id: 'CreateCommand',
    examples: [
      { trigger: 'summarize', type: 'prompt', template: 'Summarize: {{text}}', args: [{ name: 'text', required: true }] },
      { trigger: 'list-files', type: 'shell', argv: ['ls', '-la'], category: 'files' },
    ],
  }),
);
export type CreateCommandInput = z.input<typeof createCommandSchema>;

/** `PATCH …/command/{trigger}`: any definition field but the trigger; null removes an optional one. */
export const patchCommandSchema = lazySchema(() => {
  const fields = definitionFields();
  return z
    .object({
      name: fields.name.unwrap(),
      description: z.string().max(2000),
      type: fields.type,
      category: categorySchema(),
      template: fields.template.unwrap().nullable(),
      runnable_id: fields.runnable_id.unwrap().nullable(),
      process_id: fields.process_id.unwrap().nullable(),
      argv: fields.argv.unwrap().nullable(),
      args: z.array(declaredArgSchema).max(32, 'at most 32 args'),
      model: modelChoiceSchema.nullable(),
      timeout_seconds: fields.timeout_seconds.unwrap().nullable(),
      max_output_bytes: fields.max_output_bytes.unwrap().nullable(),
    })
    .partial()
    .meta({ id: 'PatchCommand' });
});
export type PatchCommandInput = z.input<typeof patchCommandSchema>;

/** The fields of a command as answered, shared by the command and the search result scoring it. */
const commandFields = lazy(() => ({
  trigger: z.string(),
  name: z.string(),
  description: z.string(),
  type: z.enum(COMMAND_TYPES),
  category: z.string(),
  template: z.string().optional(),
  runnable_id: z.string().optional(),
  process_id: z.string().optional(),
  argv: z.array(z.string()).optional(),
  args: z.array(z.object({ name: z.string(), description: z.string(), required: z.boolean(), default: z.string().optional() })),
  model: modelChoiceSchema.optional(),
  timeout_seconds: z.int().optional(),
  max_output_bytes: z.int().optional(),
  usage_count: z.int(),
  last_used_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
}));

export const commandSchema = lazySchema(() => z.object(commandFields()).meta({ id: 'Command' }));
export type Command = z.output<typeof commandSchema>;

/** A search result: the command and how well it matched. */
export const scoredCommandSchema = lazySchema(() => z.object({ ...commandFields(), score: z.number().describe('relevance; higher is better') }));

export const listCommandsQuery = lazySchema(() =>
  z.object({
    type: z.enum(COMMAND_TYPES, { error: `type must be one of ${COMMAND_TYPES.join(', ')}` }).optional(),
    search: z.string().max(200).optional().describe('keeps commands whose trigger, name or description contains it (any case)'),
    ...pageQueryFields(),
  }),
);

const textQuery = lazy(() =>
  z.object({
    query: z.string().min(1, 'query must not be empty').max(200, 'query must be at most 200 characters').meta({ examples: ['deploy'] }),
  }),
);
export const suggestionsQuery = lazySchema(() =>
  z.object({
    query: z.string().max(200, 'query must be at most 200 characters').default('').describe('what was typed so far; empty: the most used commands'),
    limit: decimalQueryInteger('limit', { min: 1, max: 100 }).default(10),
  }),
);
export const searchQuery = lazySchema(() => textQuery().extend(pageQueryFields()));
export const usageQuery = lazySchema(() =>
  z.object({ limit: decimalQueryInteger('limit', { min: 1, max: 500 }).default(10) }),
);

/** The args of an execution: the execute request's, and a process task's of type command. */
export const executeArgsSchema = lazy(() =>
  z.array(z.string().max(100_000, 'an arg is at most 100000 characters'), { error: 'args must be an array of strings' }).max(32).default([]),
);

export const executeCommandSchema = lazySchema(() =>
  z
    .object({
      args: executeArgsSchema(),
      threadId: threadIdSchema().optional().describe('with toolCallId: the thread the result is appended to'),
      toolCallId: z.string().min(1).max(200).optional().describe('the tool call of the thread this execution answers'),
      model: modelChoiceSchema.optional().describe('type prompt: the model to use, over the command’s and the workspace’s'),
    })
    .refine((body) => (body.threadId === undefined) === (body.toolCallId === undefined), {
      message: 'give threadId and toolCallId together, or neither',
      path: ['toolCallId'],
    })
    .meta({ id: 'ExecuteCommand', examples: [{ args: ['hello'] }] }),
);
export type ExecuteCommandInput = z.input<typeof executeCommandSchema>;

const failureSchema = lazySchema(() => z.object({ code: z.string(), message: z.string() }));

export const executionSchema = lazySchema(() =>
  z
    .object({
      id: z.string(),
      workspace_id: z.string(),
      trigger: z.string(),
      type: z.enum(COMMAND_TYPES),
      args: z.array(z.string()),
      status: z.enum(EXECUTION_STATUSES),
      output: z.string().describe('the output so far (up to the cap); the whole output once finished'),
      output_truncated: z.boolean(),
      exit_code: z.int().nullable().describe('type shell: the exit code, once exited'),
      error: failureSchema.nullable(),
      run_id: z.string().nullable().describe('type runnable: the run; type process: the process run'),
      thread_id: z.string().nullable(),
      tool_call_id: z.string().nullable(),
      created_at: z.string(),
      started_at: z.string().nullable(),
      completed_at: z.string().nullable(),
    })
    .meta({ id: 'CommandExecution' }),
);
export type CommandExecution = z.output<typeof executionSchema>;
