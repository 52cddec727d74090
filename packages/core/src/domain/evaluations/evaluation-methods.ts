import { DomainError } from '../errors';
import { InvalidPatternError, type PatternMatcher, PatternTimeoutError } from '../../ports/pattern-matcher';
import type { GoldLabel } from '../gold-labels/gold-label-schemas';
import { jsonDepth, MAX_JSON_DEPTH } from '../input/json-depth';
import type { RunOutput } from '../runs/run-record';
import type { EvaluationComparison, EvaluationDetails, EvaluationMethod, Mismatch } from './evaluation-schemas';

/** Longest regex a label may hold; longer ones are refused before they run. */
export const MAX_PATTERN_LENGTH = 2000;
/** How long a label's regex may run on an output. */
export const PATTERN_TIMEOUT_MS = 1000;
const MAX_LISTED_MISMATCHES = 20;
/** Values longer than this (as JSON) are shown in details by their type only. */
const MAX_PREVIEW_LENGTH = 200;

export type LabelValue = Pick<GoldLabel, 'output_resource_name' | 'text_value' | 'object_value' | 'object_value_is_partial'>;

/** What one comparison finds; `scoreOutput` adds which comparison it was. */
type Finding = Omit<Score, 'comparison'>;

export interface Score {
  /** The comparison that ran: the method's own, except where the label's form decides (see `scoreOutput`). */
  comparison: EvaluationComparison;
  score: number;
  passed: boolean;
  details: EvaluationDetails;
}

/** The method used when none is asked for: what the label's form suggests. */
export function defaultMethod(label: LabelValue): EvaluationMethod {
  if (label.object_value === null) return 'exact';
  return label.object_value_is_partial ? 'json_subset' : 'json_equal';
}

/**
 * Scores a run output against a gold label (docs/api.md, "Evaluations"). Throws 400 when the label cannot be
 * used with the method (an object label for a text method, label text that is not JSON for a
 * JSON method, a pattern that does not compile or runs too long); an output that is missing or not
 * JSON simply scores 0.
 *
 * A partial object label (`object_value_is_partial`) only says what the output must contain, so it
 * is compared as a subset whatever the method (`json_equal`, and `exact`, which compares an object
 * label as JSON); `comparison` in the result says which comparison ran.
 */
export async function scoreOutput(method: EvaluationMethod, label: LabelValue, output: RunOutput | undefined, patterns: PatternMatcher): Promise<Score> {
  const comparison = comparisonOf(method, label, output);
  const { score, passed, details } = await compare(comparison, method, label, output, patterns);
  return { comparison, score, passed, details };
}

/**
 * The comparison `method` runs on this label and output: `exact` compares JSON values when either
 * side is an object; a partial object label is compared as a subset.
 */
function comparisonOf(method: EvaluationMethod, label: LabelValue, output: RunOutput | undefined): EvaluationComparison {
  const partial = label.object_value !== null && label.object_value_is_partial;
  if (method === 'json_equal') return partial ? 'json_subset' : 'json_equal';
  if (method !== 'exact') return method;
  if (partial) return 'json_subset';
  return label.object_value !== null || (output !== undefined && output.text_value === undefined) ? 'json_equal' : 'exact';
}

async function compare(
  comparison: EvaluationComparison,
  method: EvaluationMethod,
  label: LabelValue,
  output: RunOutput | undefined,
  patterns: PatternMatcher,
): Promise<Finding> {
  const name = label.output_resource_name;
  if (method === 'contains' || method === 'regex') requireTextLabel(method, label);
  const expectedJson = method === 'json_equal' || method === 'json_subset' ? labelJson(method, label) : undefined;
  if (output === undefined) return failed(name, `the run has no output named '${name}'`);
  switch (comparison) {
    case 'exact':
      return exact(label, output);
    case 'contains':
      return contains(label.text_value!, output, name);
    case 'regex':
      return regex(label.text_value!, output, name, patterns);
    case 'json_equal':
      return method === 'exact' ? exact(label, output) : jsonEqual(expectedJson!.value, output, name);
    case 'json_subset':
      // A partial label always holds an object value.
      return jsonSubset(expectedJson?.value ?? label.object_value, output, name);
  }
}

function exact(label: LabelValue, output: RunOutput): Finding {
  const name = label.output_resource_name;
  // An object on either side makes it a comparison of JSON values, key order aside.
  if (label.object_value !== null || output.text_value === undefined) {
    const expected = label.object_value !== null ? { value: label.object_value } : parseJson(label.text_value!);
    if (expected === undefined) return failed(name, 'the output is a JSON value and the label text is not JSON');
    requireBoundedDepth(expected.value);
    return jsonEqual(expected.value, output, name);
  }
  const actual = output.text_value;
  const expected = label.text_value!;
  if (actual === expected) return passed(name, 'the output equals the label');
  const limit = Math.min(actual.length, expected.length);
  let index = 0;
  while (index < limit && actual[index] === expected[index]) index += 1;
  const message = `the output differs from the label at character ${index}`;
  return { score: 0, passed: false, details: { output_resource_name: name, message, first_difference_at: index } };
}

function contains(expected: string, output: RunOutput, name: string): Finding {
  const index = outputText(output).indexOf(expected);
  const message = index >= 0 ? `the output contains the label text at character ${index}` : 'the output does not contain the label text';
  return { score: index >= 0 ? 1 : 0, passed: index >= 0, details: { output_resource_name: name, message, found_at: index >= 0 ? index : null } };
}

async function regex(pattern: string, output: RunOutput, name: string, patterns: PatternMatcher): Promise<Finding> {
  if (pattern.length > MAX_PATTERN_LENGTH) throw labelError(`the gold label's pattern is ${pattern.length} characters long; regex takes at most ${MAX_PATTERN_LENGTH}`);
  let found: { text: string; index: number } | null;
  try {
    ({ match: found } = await patterns.match(pattern, outputText(output), { timeoutMs: PATTERN_TIMEOUT_MS }));
  } catch (error) {
    if (error instanceof InvalidPatternError) throw labelError(`the gold label's text_value is not a valid regular expression: ${error.message}`);
    if (error instanceof PatternTimeoutError) {
      throw labelError(
        `the gold label's pattern ran longer than ${error.timeoutMs} ms on the output; simplify it (nested quantifiers such as (a+)+ backtrack exponentially)`,
      );
    }
    throw error;
  }
  const match = found && { text: preview(found.text) as string, index: found.index };
  const message = found ? `the pattern matches the output at character ${found.index}` : 'the pattern does not match the output';
  return { score: found ? 1 : 0, passed: found !== null, details: { output_resource_name: name, message, match } };
}

function jsonEqual(expected: unknown, output: RunOutput, name: string): Finding {
  const actual = outputJson(output);
  if (actual === undefined) return failed(name, 'the output is not JSON');
  const mismatches: Mismatch[] = [];
  compareEqual(expected, actual.value, '$', mismatches);
  if (mismatches.length === 0) return passed(name, 'the output equals the label as JSON');
  return {
    score: 0,
    passed: false,
    details: { output_resource_name: name, message: `the output differs from the label in ${mismatches.length} place(s)`, ...listed(mismatches) },
  };
}

function jsonSubset(expected: unknown, output: RunOutput, name: string): Finding {
  const actual = outputJson(output);
  const total = countLeaves(expected);
  if (actual === undefined) {
    return { score: 0, passed: false, details: { output_resource_name: name, message: 'the output is not JSON', matched_leaves: 0, total_leaves: total } };
  }
  const result: SubsetResult = { mismatches: [], missedLeaves: 0 };
  compareSubset(expected, actual.value, '$', result);
  const matched = total - result.missedLeaves;
  const score = total === 0 ? 1 : matched / total;
  const message =
    result.missedLeaves === 0 ? `every one of the label's ${total} value(s) is in the output` : `${matched} of the label's ${total} value(s) are in the output`;
  return {
    score,
    passed: result.missedLeaves === 0,
    details: {
      output_resource_name: name,
      message,
      matched_leaves: matched,
      total_leaves: total,
      ...(result.mismatches.length > 0 ? listed(result.mismatches) : {}),
    },
  };
}

/** Deep equality, key order aside; every difference is listed. */
function compareEqual(expected: unknown, actual: unknown, path: string, mismatches: Mismatch[]): void {
  if (isObject(expected) && isObject(actual)) {
    for (const key of Object.keys(expected)) {
      const child = childPath(path, key);
      if (Object.hasOwn(actual, key)) compareEqual(expected[key], actual[key], child, mismatches);
      else mismatches.push({ path: child, expected: preview(expected[key]), problem: 'missing' });
    }
    for (const key of Object.keys(actual)) {
      if (!Object.hasOwn(expected, key)) mismatches.push({ path: childPath(path, key), actual: preview(actual[key]), problem: 'unexpected' });
    }
  } else if (Array.isArray(expected) && Array.isArray(actual)) {
    for (let index = 0; index < Math.max(expected.length, actual.length); index += 1) {
      const child = `${path}[${index}]`;
      if (index >= actual.length) mismatches.push({ path: child, expected: preview(expected[index]), problem: 'missing' });
      else if (index >= expected.length) mismatches.push({ path: child, actual: preview(actual[index]), problem: 'unexpected' });
      else compareEqual(expected[index], actual[index], child, mismatches);
    }
  } else if (!sameScalar(expected, actual)) {
    mismatches.push({ path, expected: preview(expected), actual: preview(actual), problem: 'different' });
  }
}

interface SubsetResult {
  /** One per place the output departs from the label (a missing key counts once). */
  mismatches: Mismatch[];
  /** Leaves of the label not found equal in the output (all those under a missing key). */
  missedLeaves: number;
}

/**
 * Every leaf of the label (a scalar, or an empty object or array) must be at the same path in the
 * output; objects there may have more keys, and arrays more elements.
 */
function compareSubset(expected: unknown, actual: unknown, path: string, result: SubsetResult): void {
  const expectedEntries = entriesOf(expected);
  if (expectedEntries === undefined || expectedEntries.length === 0) {
    const matches = expectedEntries === undefined ? sameScalar(expected, actual) : Array.isArray(expected) ? Array.isArray(actual) : isObject(actual);
    if (!matches) {
      result.mismatches.push({ path, expected: preview(expected), actual: preview(actual), problem: 'different' });
      result.missedLeaves += 1;
    }
    return;
  }
  const container = Array.isArray(expected) ? (Array.isArray(actual) ? actual : undefined) : isObject(actual) ? actual : undefined;
  if (container === undefined) {
    result.mismatches.push({ path, expected: preview(expected), actual: preview(actual), problem: 'different' });
    result.missedLeaves += countLeaves(expected);
    return;
  }
  for (const [key, value] of expectedEntries) {
    const child = typeof key === 'number' ? `${path}[${key}]` : childPath(path, key);
    if (Object.hasOwn(container, key)) {
      compareSubset(value, (container as Record<string | number, unknown>)[key], child, result);
    } else {
      result.mismatches.push({ path: child, expected: preview(value), problem: 'missing' });
      result.missedLeaves += countLeaves(value);
    }
  }
}

function countLeaves(value: unknown): number {
  const entries = entriesOf(value);
  if (entries === undefined || entries.length === 0) return 1;
  return entries.reduce((sum, [, child]) => sum + countLeaves(child), 0);
}

/** Children of an object or array; undefined for a scalar. */
function entriesOf(value: unknown): [string | number, unknown][] | undefined {
  if (Array.isArray(value)) return value.map((child, index) => [index, child]);
  if (isObject(value)) return Object.entries(value);
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function sameScalar(expected: unknown, actual: unknown): boolean {
  return expected === actual;
}

function childPath(path: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

function listed(mismatches: Mismatch[]): Pick<EvaluationDetails, 'mismatches' | 'mismatch_count'> {
  return { mismatches: mismatches.slice(0, MAX_LISTED_MISMATCHES), mismatch_count: mismatches.length };
}

/** A value for details: itself when small, else a note of what it is. */
function preview(value: unknown): unknown {
  if (value === undefined) return undefined;
  if (jsonLength(value) <= MAX_PREVIEW_LENGTH) return value;
  if (typeof value === 'string') return `${value.slice(0, MAX_PREVIEW_LENGTH)}…`;
  return Array.isArray(value) ? `[array of ${value.length}]` : `{object of ${Object.keys(value as object).length} keys}`;
}

/** Length of the value as JSON; infinite for one too deep to serialise. */
function jsonLength(value: unknown): number {
  try {
    return JSON.stringify(value).length;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

function outputText(output: RunOutput): string {
  return output.text_value ?? JSON.stringify(output.object_value);
}

/** The output as a JSON value: its object value, or its text parsed; undefined when the text is not JSON. */
function outputJson(output: RunOutput): { value: unknown } | undefined {
  return output.text_value === undefined ? { value: output.object_value } : parseJson(output.text_value);
}

function labelJson(method: EvaluationMethod, label: LabelValue): { value: unknown } {
  if (label.object_value !== null) return { value: label.object_value };
  const parsed = parseJson(label.text_value!);
  if (parsed === undefined) throw labelError(`method ${method} compares JSON, and the gold label's text_value is not JSON; use exact, contains or regex, or give the label an object_value`);
  requireBoundedDepth(parsed.value);
  return parsed;
}

/** The comparisons walk the label recursively; a label's text may hold JSON of any depth. */
function requireBoundedDepth(value: unknown): void {
  if (jsonDepth(value) > MAX_JSON_DEPTH) throw labelError(`the gold label's JSON is nested more than ${MAX_JSON_DEPTH} levels deep`);
}

function parseJson(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

function requireTextLabel(method: EvaluationMethod, label: LabelValue): void {
  if (label.text_value === null) {
    throw labelError(`method ${method} compares text, and this gold label holds an object_value; use json_equal or json_subset (or exact)`);
  }
}

function passed(name: string, message: string): Finding {
  return { score: 1, passed: true, details: { output_resource_name: name, message } };
}

function failed(name: string, message: string): Finding {
  return { score: 0, passed: false, details: { output_resource_name: name, message } };
}

function labelError(message: string): DomainError {
  return DomainError.invalid(message, [{ path: 'gold_label_id', message }]);
}
