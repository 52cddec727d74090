import * as z from 'zod';
import { decimalQueryInteger } from '../input/page-query';
import { tagsQuery } from '../input/tags-query';
import { RUNNABLE_TYPES, runnableConfigSchema } from './config-schema';
import { lazy } from '../lazy';
import { lazySchema } from '../lazy-schema';

/** Request and response shapes of the runnables API; the router validates with them and OpenAPI shows them. */

const tag = lazy(() =>
  z
    .string()
    .min(1, 'a tag must not be empty')
    .max(128)
    .refine((value) => !value.includes(','), 'a tag cannot contain a comma (list filters take comma-separated tags)'),
);

const name = lazy(() =>
  z
    .string()
    .max(1024)
    .refine((value) => value.trim().length > 0, 'name must not be blank'),
);

const configFields = lazy(() => ({
  config_content: z.string().optional().describe('the configuration as YAML or JSON text'),
  config_content_parsed: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('the configuration as an object; used when config_content is absent, and written as YAML'),
}));

export const createRunnableInput = lazySchema(() =>
  z
    .object({
      name: name(),
      description: z.string().max(100_000).nullish(),
      tags: z.array(tag()).max(100).optional(),
      ...configFields(),
    })
    .refine((input) => input.config_content !== undefined || input.config_content_parsed !== undefined, {
      message: 'give config_content (YAML or JSON text) or config_content_parsed (an object)',
      path: ['config_content'],
    })
    .meta({
      id: 'RunnableCreate',
      examples: [
        {
          name: 'summarize',
          tags: ['docs'],
          config_content: 'prompt:\n  messages:\n    - role: user\n      content: Summarize in one line.\nllms:\n  - model: openai/gpt-4o-mini\n',
        },
      ],
    }),
);
export type CreateRunnableInput = z.input<typeof createRunnableInput>;

/** Every field optional; `description: null` removes the description. */
export const updateRunnableInput = lazySchema(() =>
  z.object({
    name: name().optional(),
    description: z.string().max(100_000).nullish(),
    tags: z.array(tag()).max(100).optional(),
    ...configFields(),
  }).meta({ id: 'RunnableUpdate' }),
);
export type UpdateRunnableInput = z.input<typeof updateRunnableInput>;

/** `tags=a&tags=b` or `tags=a,b`: a runnable matches when it has all of them. */
export const listRunnablesQuery = lazySchema(() =>
  z.object({
    type: z.enum(RUNNABLE_TYPES).optional(),
    tags: tagsQuery({ maxLength: 128, trim: true }).optional().transform((tags) => tags ?? []),
    limit: decimalQueryInteger('limit', { min: 1 }).optional().describe('at most this many; all when absent'),
    offset: decimalQueryInteger('offset', { min: 0 }).optional(),
  }),
);
export type ListRunnablesQuery = z.output<typeof listRunnablesQuery>;

export const runnableIdParams = lazySchema(() => z.object({ id: z.uuid().describe('runnable id') }));

export const runnableSchema = lazySchema(() =>
  z.object({
    id: z.uuid(),
    account_id: z.string(),
    name: z.string(),
    config_content: z.string(),
    config_content_parsed: runnableConfigSchema,
    config_content_type: z.enum(RUNNABLE_TYPES),
    config_content_sha256: z.string().describe('hex SHA-256 of the UTF-8 config_content'),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    description: z.string().optional(),
    created_by: z.string(),
    tags: z.array(z.string()),
  }).meta({ id: 'Runnable' }),
);

export const runnableVersionSchema = lazySchema(() =>
  z.object({
    version: z.int().min(1),
    config_content: z.string(),
    config_content_sha256: z.string(),
    created_at: z.iso.datetime(),
    created_by: z.string(),
  }).meta({ id: 'RunnableVersion' }),
);
