import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { RunRecord } from '../packages/core/src/index';
import { PATTERN_TIMEOUT_MS } from '../packages/core/src/domain/evaluations/evaluation-methods';
import { insertRunRecord } from './fixtures/run-records';
import { startTestRunloom, type TestRunloom } from './support/harness';

interface Evaluation {
  id: string;
  run_id: string;
  gold_label_id: string;
  method: string;
  comparison: string;
  score: number;
  passed: boolean;
  details: { output_resource_name: string; message: string; [key: string]: unknown };
  created_at: string;
}

const OUTPUTS: RunRecord['outputs'] = [
  { name: 'answer', mime_type: 'text/plain', text_value: 'The capital of France is Paris.' },
  { name: 'facts', mime_type: 'application/json', object_value: { city: 'Paris', country: 'France', population: 2_100_000, landmarks: ['Eiffel Tower', 'Louvre'] } },
  { name: 'json_text', mime_type: 'application/json', text_value: '{"b": 2, "a": 1}' },
  { name: 'runaway', mime_type: 'text/plain', text_value: `${'a'.repeat(40)}!` },
];

describe('evaluations (HTTP)', () => {
  let app: TestRunloom;

  before(async () => {
    app = await startTestRunloom();
  });

  after(async () => {
    await app.close();
  });

  function addRun(overrides: Partial<RunRecord> = {}): Promise<RunRecord> {
    return insertRunRecord(app.runloom, { outputs: OUTPUTS, ...overrides });
  }

  function send(path: string, method: string, body?: unknown, account?: string): Promise<Response> {
    return app.request(path, {
      method,
      account,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
  }

  async function label(runId: string, body: Record<string, unknown>): Promise<string> {
    const response = await send(`/v1/run/${runId}/gold-labels`, 'POST', body);
    assert.equal(response.status, 201, await response.clone().text());
    return ((await response.json()) as { id: string }).id;
  }

  async function evaluate(runId: string, body: Record<string, unknown>): Promise<Evaluation> {
    const response = await send(`/v1/run/${runId}/evaluations`, 'POST', body);
    assert.equal(response.status, 201, await response.clone().text());
    return (await response.json()) as Evaluation;
  }

  async function expectError(response: Response, status: number, message?: RegExp): Promise<void> {
    const text = await response.text();
    assert.equal(response.status, status, text);
    const body = JSON.parse(text) as { error: string };
    assert.equal(typeof body.error, 'string');
    if (message) assert.match(body.error, message);
  }

  describe('methods', () => {
    let run: RunRecord;
    before(async () => {
      run = await addRun();
    });

    it('exact: answers 201 with every field; equal text passes, other text fails with where it differs', async () => {
      const labelId = await label(run.id, { output_resource_name: 'answer', text_value: 'The capital of France is Paris.' });
      const pass = await evaluate(run.id, { gold_label_id: labelId, method: 'exact' });
      assert.deepEqual(Object.keys(pass).sort(), ['comparison', 'created_at', 'details', 'gold_label_id', 'id', 'method', 'passed', 'run_id', 'score']);
      assert.deepEqual(
        { run_id: pass.run_id, gold_label_id: pass.gold_label_id, method: pass.method, comparison: pass.comparison, score: pass.score, passed: pass.passed },
        { run_id: run.id, gold_label_id: labelId, method: 'exact', comparison: 'exact', score: 1, passed: true },
      );
      assert.equal(pass.details.output_resource_name, 'answer');
      assert.ok(!Number.isNaN(Date.parse(pass.created_at)));

      const failLabel = await label(run.id, { output_resource_name: 'answer', text_value: 'The capital of France is Lyon.' });
      const fail = await evaluate(run.id, { gold_label_id: failLabel, method: 'exact' });
      assert.deepEqual([fail.score, fail.passed, fail.details.first_difference_at], [0, false, 25]);
    });

    it('exact on an object label compares JSON with key order ignored', async () => {
      const labelId = await label(run.id, { output_resource_name: 'json_text', object_value: { a: 1, b: 2 } });
      const scored = await evaluate(run.id, { gold_label_id: labelId, method: 'exact' });
      assert.deepEqual([scored.passed, scored.method, scored.comparison], [true, 'exact', 'json_equal']);
    });

    it('contains: the output contains the label text, or not', async () => {
      const yes = await evaluate(run.id, { gold_label_id: await label(run.id, { output_resource_name: 'answer', text_value: 'Paris' }), method: 'contains' });
      assert.deepEqual([yes.score, yes.passed, yes.details.found_at], [1, true, 25]);
      const no = await evaluate(run.id, { gold_label_id: await label(run.id, { output_resource_name: 'answer', text_value: 'Berlin' }), method: 'contains' });
      assert.deepEqual([no.score, no.passed, no.details.found_at], [0, false, null]);
    });

    it('regex: the label text is a pattern that must match the output', async () => {
      const yes = await evaluate(run.id, { gold_label_id: await label(run.id, { output_resource_name: 'answer', text_value: '^The capital of \\w+ is (Paris|Lyon)\\.$' }), method: 'regex' });
      assert.deepEqual([yes.score, yes.passed], [1, true]);
      assert.deepEqual(yes.details.match, { text: 'The capital of France is Paris.', index: 0 });
      const no = await evaluate(run.id, { gold_label_id: await label(run.id, { output_resource_name: 'answer', text_value: '^Paris' }), method: 'regex' });
      assert.deepEqual([no.score, no.passed, no.details.match], [0, false, null]);
    });

    it('regex: an invalid pattern, and one that backtracks catastrophically, answer 400 and store nothing', async () => {
      const before = ((await (await send(`/v1/run/${run.id}/evaluations`, 'GET')).json()) as unknown[]).length;
      await expectError(
        await send(`/v1/run/${run.id}/evaluations`, 'POST', { gold_label_id: await label(run.id, { output_resource_name: 'answer', text_value: '(unclosed' }), method: 'regex' }),
        400,
        /not a valid regular expression/,
      );
      await expectError(
        await send(`/v1/run/${run.id}/evaluations`, 'POST', { gold_label_id: await label(run.id, { output_resource_name: 'runaway', text_value: '^(a+)+$' }), method: 'regex' }),
        400,
        new RegExp(`ran longer than ${PATTERN_TIMEOUT_MS} ms`),
      );
      assert.equal(((await (await send(`/v1/run/${run.id}/evaluations`, 'GET')).json()) as unknown[]).length, before);
    });

    it('json_equal: equal objects pass whatever the key order; a JSON text output is parsed; a difference scores 0 with the mismatch', async () => {
      const same = await label(run.id, { output_resource_name: 'facts', object_value: { landmarks: ['Eiffel Tower', 'Louvre'], population: 2_100_000, country: 'France', city: 'Paris' } });
      assert.deepEqual(await evaluate(run.id, { gold_label_id: same, method: 'json_equal' }).then((e) => [e.score, e.passed]), [1, true]);
      const fromText = await label(run.id, { output_resource_name: 'json_text', object_value: { a: 1, b: 2 } });
      assert.equal((await evaluate(run.id, { gold_label_id: fromText, method: 'json_equal' })).passed, true);
      const other = await label(run.id, { output_resource_name: 'facts', object_value: { city: 'Paris', country: 'France', population: 2_000_000, landmarks: ['Eiffel Tower', 'Louvre'] } });
      const fail = await evaluate(run.id, { gold_label_id: other, method: 'json_equal' });
      assert.deepEqual([fail.score, fail.passed], [0, false]);
      assert.deepEqual(fail.details.mismatches, [{ path: '$.population', expected: 2_000_000, actual: 2_100_000, problem: 'different' }]);
    });

    it('json_subset: a partial label scores the share of its values found, and is the default for partial labels', async () => {
      const partial = await label(run.id, { output_resource_name: 'facts', object_value: { city: 'Paris', country: 'Spain', landmarks: ['Eiffel Tower'] }, object_value_is_partial: true });
      const scored = await evaluate(run.id, { gold_label_id: partial });
      assert.equal(scored.method, 'json_subset');
      assert.deepEqual([scored.passed, scored.details.matched_leaves, scored.details.total_leaves], [false, 2, 3]);
      assert.ok(Math.abs(scored.score - 2 / 3) < 1e-9);
      const covered = await label(run.id, { output_resource_name: 'facts', object_value: { city: 'Paris', landmarks: ['Eiffel Tower'] }, object_value_is_partial: true });
      assert.deepEqual(await evaluate(run.id, { gold_label_id: covered }).then((e) => [e.method, e.score, e.passed]), ['json_subset', 1, true]);
    });

    it('json_equal on a partial label compares as a subset, says so in comparison, and keeps it when read back', async () => {
      const partial = await label(run.id, { output_resource_name: 'facts', object_value: { city: 'Paris', landmarks: ['Eiffel Tower'] }, object_value_is_partial: true });
      const scored = await evaluate(run.id, { gold_label_id: partial, method: 'json_equal' });
      assert.deepEqual(
        { method: scored.method, comparison: scored.comparison, score: scored.score, passed: scored.passed, matched: scored.details.matched_leaves, total: scored.details.total_leaves },
        { method: 'json_equal', comparison: 'json_subset', score: 1, passed: true, matched: 2, total: 2 },
      );
      const read = (await (await send(`/v1/run/${run.id}/evaluation/${scored.id}`, 'GET')).json()) as Evaluation;
      assert.deepEqual(read, scored);

      const missed = await label(run.id, { output_resource_name: 'facts', object_value: { city: 'Lyon', landmarks: ['Eiffel Tower'] }, object_value_is_partial: true });
      const half = await evaluate(run.id, { gold_label_id: missed, method: 'json_equal' });
      assert.deepEqual([half.comparison, half.score, half.passed], ['json_subset', 0.5, false]);
    });

    it('defaults to exact for a text label and json_equal for a full object label', async () => {
      assert.equal((await evaluate(run.id, { gold_label_id: await label(run.id, { output_resource_name: 'answer', text_value: 'x' }) })).method, 'exact');
      assert.equal((await evaluate(run.id, { gold_label_id: await label(run.id, { output_resource_name: 'facts', object_value: { city: 'Paris' } }) })).method, 'json_equal');
    });

    it('refuses with 400 a text method on an object label and a JSON method on a label text that is not JSON', async () => {
      const objectLabel = await label(run.id, { output_resource_name: 'facts', object_value: { city: 'Paris' } });
      await expectError(await send(`/v1/run/${run.id}/evaluations`, 'POST', { gold_label_id: objectLabel, method: 'contains' }), 400, /compares text/);
      const textLabel = await label(run.id, { output_resource_name: 'answer', text_value: 'Paris' });
      await expectError(await send(`/v1/run/${run.id}/evaluations`, 'POST', { gold_label_id: textLabel, method: 'json_subset' }), 400, /not JSON/);
    });
  });

  describe('list, get, delete', () => {
    it('lists oldest first, gets one, deletes with 200 {id}, and then answers 404', async () => {
      const run = await addRun();
      const labelId = await label(run.id, { output_resource_name: 'answer', text_value: 'Paris' });
      const first = await evaluate(run.id, { gold_label_id: labelId, method: 'contains' });
      const second = await evaluate(run.id, { gold_label_id: labelId, method: 'exact' });

      const list = await send(`/v1/run/${run.id}/evaluations`, 'GET');
      assert.equal(list.status, 200);
      assert.deepEqual(await list.json(), [first, second]);
      const page = await send(`/v1/run/${run.id}/evaluations?limit=1&offset=1`, 'GET');
      assert.deepEqual(await page.json(), [second]);

      const got = await send(`/v1/run/${run.id}/evaluation/${first.id}`, 'GET');
      assert.equal(got.status, 200);
      assert.deepEqual(await got.json(), first);

      const deleted = await send(`/v1/run/${run.id}/evaluation/${first.id}`, 'DELETE');
      assert.equal(deleted.status, 200);
      assert.deepEqual(await deleted.json(), { id: first.id });
      await expectError(await send(`/v1/run/${run.id}/evaluation/${first.id}`, 'GET'), 404);
      await expectError(await send(`/v1/run/${run.id}/evaluation/${first.id}`, 'DELETE'), 404);
      assert.deepEqual(await (await send(`/v1/run/${run.id}/evaluations`, 'GET')).json(), [second]);
    });
  });

  describe('errors', () => {
    it('answers 404 for another account’s run, label and evaluation, exactly as for unknown ids', async () => {
      const run = await addRun();
      const labelId = await label(run.id, { output_resource_name: 'answer', text_value: 'Paris' });
      const evaluation = await evaluate(run.id, { gold_label_id: labelId, method: 'contains' });
      const otherRun = await addRun({ account_id: 'acct-b' });

      await expectError(await send(`/v1/run/${run.id}/evaluations`, 'POST', { gold_label_id: labelId, method: 'exact' }, 'acct-b'), 404);
      await expectError(await send(`/v1/run/${run.id}/evaluations`, 'GET', undefined, 'acct-b'), 404);
      await expectError(await send(`/v1/run/${run.id}/evaluation/${evaluation.id}`, 'GET', undefined, 'acct-b'), 404);
      await expectError(await send(`/v1/run/${run.id}/evaluation/${evaluation.id}`, 'DELETE', undefined, 'acct-b'), 404);
      // acct-b's own run with acct-a's label, and ids that exist nowhere.
      await expectError(await send(`/v1/run/${otherRun.id}/evaluations`, 'POST', { gold_label_id: labelId, method: 'exact' }, 'acct-b'), 404);
      await expectError(await send(`/v1/run/${randomUUID()}/evaluations`, 'POST', { gold_label_id: labelId, method: 'exact' }), 404);
      await expectError(await send(`/v1/run/${run.id}/evaluations`, 'POST', { gold_label_id: randomUUID(), method: 'exact' }), 404);
      await expectError(await send(`/v1/run/${run.id}/evaluation/${randomUUID()}`, 'GET'), 404);
      // The evaluation still exists for its owner.
      assert.equal((await send(`/v1/run/${run.id}/evaluation/${evaluation.id}`, 'GET')).status, 200);
    });

    it('answers 404 for a label of another run of the same account, and an evaluation read through another run', async () => {
      const run = await addRun();
      const sibling = await addRun();
      const labelId = await label(run.id, { output_resource_name: 'answer', text_value: 'Paris' });
      await expectError(await send(`/v1/run/${sibling.id}/evaluations`, 'POST', { gold_label_id: labelId, method: 'exact' }), 404);
      const evaluation = await evaluate(run.id, { gold_label_id: labelId, method: 'exact' });
      await expectError(await send(`/v1/run/${sibling.id}/evaluation/${evaluation.id}`, 'GET'), 404);
      await expectError(await send(`/v1/run/${sibling.id}/evaluation/${evaluation.id}`, 'DELETE'), 404);
    });

    it('answers 409 naming the state for a run that has not finished', async () => {
      const run = await addRun({ status: 'running', completed_at: null, outputs: [] });
      await expectError(await send(`/v1/run/${run.id}/evaluations`, 'POST', { gold_label_id: randomUUID(), method: 'exact' }), 409, /running/);
    });

    it('answers 400 with details for a missing or malformed gold_label_id and an unknown method', async () => {
      const run = await addRun();
      const labelId = await label(run.id, { output_resource_name: 'answer', text_value: 'Paris' });
      for (const body of [{ method: 'exact' }, { gold_label_id: 'nope', method: 'exact' }, { gold_label_id: labelId, method: 'fuzzy' }, { gold_label_id: 42 }]) {
        const response = await send(`/v1/run/${run.id}/evaluations`, 'POST', body);
        const text = await response.text();
        assert.equal(response.status, 400, text);
        const error = JSON.parse(text) as { error: string; details: { path: string; message: string }[] };
        assert.ok(error.details.length > 0, text);
      }
      const malformed = await app.request(`/v1/run/${run.id}/evaluations`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"gold_label_id":' });
      await expectError(malformed, 400);
      await expectError(await send(`/v1/run/${run.id}/evaluations?limit=0`, 'GET'), 400);
      await expectError(await send(`/v1/run/not-a-uuid/evaluations`, 'GET'), 404);
    });
  });
});
