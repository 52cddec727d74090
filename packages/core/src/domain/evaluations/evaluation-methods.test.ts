import assert from 'node:assert/strict';
import { WorkerPatternMatcher } from '../../adapters/node/worker-pattern-matcher';
import { DomainError } from '../errors';
import type { RunOutput } from '../runs/run-record';
import { defaultMethod, type LabelValue, scoreOutput } from './evaluation-methods';
import type { EvaluationMethod } from './evaluation-schemas';

const patterns = new WorkerPatternMatcher();

function textLabel(text: string): LabelValue {
  return { output_resource_name: 'out', text_value: text, object_value: null, object_value_is_partial: false };
}

function objectLabel(value: Record<string, unknown>, partial = false): LabelValue {
  return { output_resource_name: 'out', text_value: null, object_value: value, object_value_is_partial: partial };
}

function text(value: string): RunOutput {
  return { name: 'out', mime_type: 'text/plain', text_value: value };
}

function object(value: unknown): RunOutput {
  return { name: 'out', mime_type: 'application/json', object_value: value };
}

function score(method: EvaluationMethod, label: LabelValue, output: RunOutput | undefined) {
  return scoreOutput(method, label, output, patterns);
}

describe('evaluation methods', () => {
  it('picks json_subset for a partial object label, json_equal for an object label, exact for text', () => {
    assert.equal(defaultMethod(objectLabel({ a: 1 }, true)), 'json_subset');
    assert.equal(defaultMethod(objectLabel({ a: 1 })), 'json_equal');
    assert.equal(defaultMethod(textLabel('a')), 'exact');
  });

  it('exact compares text exactly and names the first differing character', async () => {
    assert.deepEqual(await score('exact', textLabel('Paris'), text('Paris')), {
      comparison: 'exact',
      score: 1,
      passed: true,
      details: { output_resource_name: 'out', message: 'the output equals the label' },
    });
    const different = await score('exact', textLabel('Paris'), text('Paris '));
    assert.equal(different.score, 0);
    assert.equal(different.details.first_difference_at, 5);
  });

  it('exact compares an object label with an object or JSON text output as JSON, key order aside', async () => {
    assert.equal((await score('exact', objectLabel({ a: 1, b: [1, 2] }), object({ b: [1, 2], a: 1 }))).passed, true);
    assert.equal((await score('exact', objectLabel({ a: 1 }), text('{"a":1}'))).passed, true);
    assert.equal((await score('exact', textLabel('{"a": 1}'), object({ a: 1 }))).passed, true);
    assert.equal((await score('exact', objectLabel({ a: 1 }), object({ a: 2 }))).passed, false);
    assert.equal((await score('exact', objectLabel({ a: 1 }), object({ a: 1 }))).comparison, 'json_equal');
    assert.equal((await score('exact', textLabel('{"a": 1}'), object({ a: 1 }))).comparison, 'json_equal');
  });

  it('compares a partial label as a subset whatever the method asks, and says so in comparison', async () => {
    const label = objectLabel({ city: 'Paris', landmarks: ['Eiffel Tower'] }, true);
    const output = object({ city: 'Paris', country: 'France', landmarks: ['Eiffel Tower', 'Louvre'] });
    for (const method of ['json_equal', 'exact', 'json_subset'] as const) {
      const result = await score(method, label, output);
      assert.deepEqual(
        { comparison: result.comparison, score: result.score, passed: result.passed, matched: result.details.matched_leaves, total: result.details.total_leaves },
        { comparison: 'json_subset', score: 1, passed: true, matched: 2, total: 2 },
        method,
      );
    }
    const missed = await score('json_equal', label, object({ city: 'Lyon', landmarks: ['Eiffel Tower'] }));
    assert.deepEqual([missed.comparison, missed.score, missed.passed], ['json_subset', 0.5, false]);
    // The same label, not partial, is compared for equality.
    const full = await score('json_equal', objectLabel({ city: 'Paris', landmarks: ['Eiffel Tower'] }), output);
    assert.deepEqual([full.comparison, full.passed], ['json_equal', false]);
  });

  it('json_equal lists what is different, missing and unexpected', async () => {
    const result = await score('json_equal', objectLabel({ a: 1, b: { c: 'x' }, list: [1, 2] }), object({ a: 2, b: {}, list: [1, 2, 3], extra: true }));
    assert.equal(result.score, 0);
    assert.deepEqual(result.details.mismatches, [
      { path: '$.a', expected: 1, actual: 2, problem: 'different' },
      { path: '$.b.c', expected: 'x', problem: 'missing' },
      { path: '$.list[2]', actual: 3, problem: 'unexpected' },
      { path: '$.extra', actual: true, problem: 'unexpected' },
    ]);
    assert.equal(result.details.mismatch_count, 4);
  });

  it('json_subset scores the share of label leaves found equal, across nesting and arrays', async () => {
    const label = objectLabel({ city: 'Paris', geo: { lat: 48.85, lon: 2.35 }, tags: ['capital', 'europe'], empty: {} }, true);
    const full = await score('json_subset', label, object({ city: 'Paris', geo: { lat: 48.85, lon: 2.35, alt: 35 }, tags: ['capital', 'europe', 'x'], empty: { k: 1 }, more: 1 }));
    assert.deepEqual({ score: full.score, passed: full.passed, matched: full.details.matched_leaves, total: full.details.total_leaves }, { score: 1, passed: true, matched: 6, total: 6 });

    const partial = await score('json_subset', label, object({ city: 'Lyon', geo: { lat: 48.85 }, tags: ['capital'], empty: {} }));
    assert.equal(partial.details.total_leaves, 6);
    assert.equal(partial.details.matched_leaves, 3);
    assert.equal(partial.score, 0.5);
    assert.equal(partial.passed, false);
    assert.deepEqual(partial.details.mismatches, [
      { path: '$.city', expected: 'Paris', actual: 'Lyon', problem: 'different' },
      { path: '$.geo.lon', expected: 2.35, problem: 'missing' },
      { path: '$.tags[1]', expected: 'europe', problem: 'missing' },
    ]);
  });

  it('json_subset counts every leaf under a missing or mistyped key as missed', async () => {
    const result = await score('json_subset', objectLabel({ a: 1, nested: { b: 2, c: [3, 4] } }, true), object({ a: 1, nested: 'no' }));
    assert.equal(result.details.total_leaves, 4);
    assert.equal(result.details.matched_leaves, 1);
    assert.equal(result.score, 0.25);
    assert.equal(result.details.mismatch_count, 1);
  });

  it('json methods score 0 on an output that is not JSON, and refuse a label text that is not JSON', async () => {
    const notJson = await score('json_subset', objectLabel({ a: 1 }), text('not json'));
    assert.deepEqual([notJson.score, notJson.details.message], [0, 'the output is not JSON']);
    await assert.rejects(score('json_equal', textLabel('plain words'), object({ a: 1 })), (error: unknown) => error instanceof DomainError && isInvalidInput(error));
    const deep = '['.repeat(100) + ']'.repeat(100);
    await assert.rejects(score('json_equal', textLabel(deep), object({ a: 1 })), /nested more than 64 levels/);
  });

  it('contains and regex search the text (an object output as its JSON) and refuse object labels', async () => {
    assert.equal((await score('contains', textLabel('"city":"Paris"'), object({ city: 'Paris' }))).passed, true);
    const regex = await score('regex', textLabel('Par(is)'), text('in Paris'));
    assert.deepEqual(regex.details.match, { text: 'Paris', index: 3 });
    await assert.rejects(score('contains', objectLabel({ a: 1 }), text('x')), /compares text/);
  });

  it('refuses a regex that is invalid, too long or too slow with 400', async () => {
    const isBadRequest = (pattern: RegExp) => (error: unknown) => error instanceof DomainError && isInvalidInput(error) && pattern.test(error.message);
    await assert.rejects(score('regex', textLabel('(open'), text('x')), isBadRequest(/not a valid regular expression/));
    await assert.rejects(score('regex', textLabel('a'.repeat(2001)), text('x')), isBadRequest(/at most 2000/));
    await assert.rejects(score('regex', textLabel('^(a+)+$'), text(`${'a'.repeat(40)}!`)), isBadRequest(/ran longer than 1000 ms/));
  });

  it('scores 0 when the run has no output of the label’s name', async () => {
    const result = await score('exact', textLabel('x'), undefined);
    assert.deepEqual([result.score, result.passed, result.details.message], [0, false, "the run has no output named 'out'"]);
  });
});

/** The domain's refusal of invalid input, which answers 400 over HTTP. */
function isInvalidInput(error: DomainError): boolean {
  return error.code === 'BAD_REQUEST' || error.code === 'VALIDATION_FAILED';
}
