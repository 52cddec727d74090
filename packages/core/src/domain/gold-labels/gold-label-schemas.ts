import * as z from 'zod';
import { TOO_DEEP_MESSAGE, withinDepthLimit } from '../input/json-depth';
import { lazy } from '../lazy';
import { lazySchema } from '../lazy-schema';

/** A gold label as answered (docs/api.md#gold-labels): exactly one of `text_value` and `object_value` is non-null. */
export interface GoldLabel {
  id: string;
  account_id: string;
  run_id: string;
  output_resource_name: string;
  text_value: string | null;
  object_value: Record<string, unknown> | null;
  object_value_is_partial: boolean;
  created_by: string;
  updated_by: string;
  created_at: string;
  updated_at: string;
}


const outputResourceName = lazy(() =>
  z
    .string()
    .trim()
    .min(1, 'output_resource_name must not be empty')
    .max(255, 'output_resource_name must be at most 255 characters'),
);

const textValue = lazy(() => z.string());

const objectValue = lazySchema(() =>
  z
    .record(z.string(), z.unknown(), { error: 'object_value must be a JSON object' })
    .refine(withinDepthLimit, TOO_DEEP_MESSAGE),
);

/** `POST /v1/run/{run_id}/gold-labels`. Which of the values is set is checked by the service. */
export const createGoldLabelBody = lazySchema(() =>
  z.object({
    output_resource_name: outputResourceName(),
    text_value: textValue().nullish(),
    object_value: objectValue.nullish(),
    object_value_is_partial: z.boolean().optional(),
  }).meta({ id: 'GoldLabelCreate' }),
);
export type CreateGoldLabelInput = z.infer<typeof createGoldLabelBody>;

/** `PATCH …/gold-label/{id}`: given fields change; `null` clears a value (to switch text ⇄ object). */
export const updateGoldLabelBody = lazySchema(() =>
  z.object({
    output_resource_name: outputResourceName().optional(),
    text_value: textValue().nullish(),
    object_value: objectValue.nullish(),
    object_value_is_partial: z.boolean().optional(),
  }).meta({ id: 'GoldLabelUpdate' }),
);
export type UpdateGoldLabelInput = z.infer<typeof updateGoldLabelBody>;

export const goldLabelSchema = lazySchema(() =>
  z.object({
    id: z.uuid(),
    account_id: z.string(),
    run_id: z.uuid(),
    output_resource_name: z.string(),
    text_value: z.string().nullable(),
    object_value: z.record(z.string(), z.unknown()).nullable(),
    object_value_is_partial: z.boolean(),
    created_by: z.string(),
    updated_by: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
  }).meta({ id: 'GoldLabel' }),
);
