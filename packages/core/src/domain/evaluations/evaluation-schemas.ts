import * as z from 'zod';
import { lazySchema } from '../lazy-schema';

/** docs/api.md#evaluations: how an output is scored against its gold label. */
export const EVALUATION_METHODS = ['exact', 'contains', 'regex', 'json_equal', 'json_subset'] as const;
export type EvaluationMethod = (typeof EVALUATION_METHODS)[number];
/**
 * The comparison that ran for a method: the method's own, but `exact` compares JSON values
 * (`json_equal`) when either side is an object, and a partial object label is always compared as a
 * subset (`json_subset`), `json_equal` and `exact` included.
 */
export type EvaluationComparison = EvaluationMethod;

/** An evaluation as answered (docs/api.md#evaluations). */
export interface Evaluation {
  id: string;
  run_id: string;
  gold_label_id: string;
  /** The method asked for (or the label's default). */
  method: EvaluationMethod;
  /** The comparison that ran (see `EvaluationComparison`). */
  comparison: EvaluationComparison;
  /** 0..1; 1 is a full match. */
  score: number;
  passed: boolean;
  details: EvaluationDetails;
  created_at: string;
}

/** One place where output and label differ. `actual` is absent when the output has nothing there. */
export interface Mismatch {
  path: string;
  expected?: unknown;
  actual?: unknown;
  problem: 'different' | 'missing' | 'unexpected';
}

/** What the score is made of; the fields beyond `message` depend on the method. */
export interface EvaluationDetails {
  output_resource_name: string;
  message: string;
  /** exact (text): index of the first differing character. */
  first_difference_at?: number;
  /** contains: where the label text starts in the output. */
  found_at?: number | null;
  /** regex: the first match. */
  match?: { text: string; index: number } | null;
  /** json_subset: leaves of the label found equal in the output, of all its leaves. */
  matched_leaves?: number;
  total_leaves?: number;
  /** json_equal, json_subset, exact (JSON): the first differences, at most 20. */
  mismatches?: Mismatch[];
  mismatch_count?: number;
}

export const createEvaluationBody = lazySchema(() =>
  z.object({
    gold_label_id: z.uuid({ error: 'gold_label_id must be the id (uuid) of a gold label of this run' }),
    method: z
      .enum(EVALUATION_METHODS, { error: `method must be one of ${EVALUATION_METHODS.join(', ')}` })
      .optional()
      .describe('default: json_subset for a partial object label, json_equal for an object label, exact for a text label'),
  }).meta({ id: 'EvaluationCreate' }),
);
export type CreateEvaluationInput = z.infer<typeof createEvaluationBody>;

const mismatchSchema = lazySchema(() =>
  z.object({
    path: z.string(),
    expected: z.unknown().optional(),
    actual: z.unknown().optional(),
    problem: z.enum(['different', 'missing', 'unexpected']),
  }).meta({ id: 'EvaluationMismatch' }),
);

export const evaluationSchema = lazySchema(() =>
  z.object({
    id: z.uuid(),
    run_id: z.uuid(),
    gold_label_id: z.uuid(),
    method: z.enum(EVALUATION_METHODS).describe('the method asked for, or the default for the label'),
    comparison: z
      .enum(EVALUATION_METHODS)
      .describe('the comparison that ran: exact on a JSON value compares as json_equal; a partial label always compares as json_subset'),
    score: z.number().min(0).max(1),
    passed: z.boolean(),
    details: z.object({
      output_resource_name: z.string(),
      message: z.string(),
      first_difference_at: z.int().optional(),
      found_at: z.int().nullable().optional(),
      match: z.object({ text: z.string(), index: z.int() }).nullable().optional(),
      matched_leaves: z.int().optional(),
      total_leaves: z.int().optional(),
      mismatches: z.array(mismatchSchema).optional(),
      mismatch_count: z.int().optional(),
    }),
    created_at: z.string(),
  }).meta({ id: 'Evaluation' }),
);
