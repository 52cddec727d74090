import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { RunRecord } from '../packages/core/src/index';
import { insertRunRecord } from './fixtures/run-records';
import { ManualClock } from '../packages/core/src/testing/manual-clock';
import { startTestRunloom, type TestRunloom } from './support/harness';

interface Label {
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

const OUTPUTS: RunRecord['outputs'] = [
  { name: 'answer', mime_type: 'text/plain', text_value: 'Paris' },
  { name: 'facts', mime_type: 'application/json', object_value: { city: 'Paris', population: 2_100_000 } },
];

describe('gold labels (HTTP)', () => {
  // One instance for the file (tokens are slow to mint); each test makes its own runs.
  let app: TestRunloom;
  // Time moves only when a test says so: an edit lands at a later time than the create without a sleep.
  const clock = new ManualClock();

  before(async () => {
    app = await startTestRunloom({ clock });
  });

  after(async () => {
    await app.close();
  });

  /** Runs with fixed outputs, written through the run repository: labels need no model call. */
  function addRun(overrides: Partial<RunRecord> = {}): Promise<RunRecord> {
    return insertRunRecord(app.runloom, { outputs: OUTPUTS, ...overrides });
  }

  function send(path: string, method: string, body: unknown, account?: string): Promise<Response> {
    return app.request(path, { method, account, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  }

  async function createLabel(runId: string, body: unknown): Promise<Label> {
    const response = await send(`/v1/run/${runId}/gold-labels`, 'POST', body);
    assert.equal(response.status, 201, await response.clone().text());
    return (await response.json()) as Label;
  }

  async function expectError(response: Response, status: number, message?: RegExp): Promise<{ error: string; details?: { path: string; message: string }[] }> {
    const text = await response.text();
    assert.equal(response.status, status, text);
    const body = JSON.parse(text) as { error: string; details?: { path: string; message: string }[] };
    assert.equal(typeof body.error, 'string');
    if (message) assert.match(body.error, message);
    return body;
  }

  /** The `sub` claim of the bearer token: the client id that labels are attributed to. */
  async function clientIdOf(account = 'acct-a'): Promise<string> {
    const payload = (await app.token(account)).split('.')[1]!;
    return (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { sub: string }).sub;
  }

  describe('create, read, list', () => {
    it('creates a text label with 201 and every documented field, attributed to the token’s client', async () => {
      const run = await addRun();
      const label = await createLabel(run.id, { output_resource_name: 'answer', text_value: 'Paris' });
      assert.match(label.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      const clientId = await clientIdOf();
      assert.deepEqual(
        { ...label, id: undefined, created_at: undefined, updated_at: undefined },
        {
          id: undefined,
          account_id: 'acct-a',
          run_id: run.id,
          output_resource_name: 'answer',
          text_value: 'Paris',
          object_value: null,
          object_value_is_partial: false,
          created_by: clientId,
          updated_by: clientId,
          created_at: undefined,
          updated_at: undefined,
        },
      );
      assert.match(label.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.equal(label.updated_at, label.created_at);

      const fetched = await app.request(`/v1/run/${run.id}/gold-label/${label.id}`);
      assert.equal(fetched.status, 200);
      assert.deepEqual(await fetched.json(), label);
    });

    it('creates a partial object label', async () => {
      const run = await addRun();
      const label = await createLabel(run.id, { output_resource_name: 'facts', object_value: { city: 'Paris' }, object_value_is_partial: true });
      assert.deepEqual([label.text_value, label.object_value, label.object_value_is_partial], [null, { city: 'Paris' }, true]);
    });

    it('lists a run’s labels oldest first as a JSON array, with limit and offset', async () => {
      const run = await addRun();
      const other = await addRun();
      const created: Label[] = [];
      for (const text of ['one', 'two', 'three']) created.push(await createLabel(run.id, { output_resource_name: 'answer', text_value: text }));
      await createLabel(other.id, { output_resource_name: 'answer', text_value: 'elsewhere' });

      const all = await app.request(`/v1/run/${run.id}/gold-labels`);
      assert.equal(all.status, 200);
      assert.deepEqual(await all.json(), created);
      const page = await app.request(`/v1/run/${run.id}/gold-labels?limit=1&offset=1`);
      assert.deepEqual(await page.json(), [created[1]]);
      const empty = await app.request(`/v1/run/${(await addRun()).id}/gold-labels`);
      assert.deepEqual(await empty.json(), []);
      for (const query of ['limit=0', 'limit=501', 'limit=abc', 'offset=-1']) {
        await expectError(await app.request(`/v1/run/${run.id}/gold-labels?${query}`), 400);
      }
    });
  });

  describe('the value rule: exactly one of text_value and object_value', () => {
    const refused: [string, unknown, string][] = [
      ['neither value', { output_resource_name: 'answer' }, 'text_value'],
      ['both values', { output_resource_name: 'answer', text_value: 'Paris', object_value: { city: 'Paris' } }, 'text_value'],
      ['both values null', { output_resource_name: 'answer', text_value: null, object_value: null }, 'text_value'],
      ['an array as object_value', { output_resource_name: 'facts', object_value: ['Paris'] }, 'object_value'],
      ['a string as object_value', { output_resource_name: 'facts', object_value: 'Paris' }, 'object_value'],
      ['a number as text_value', { output_resource_name: 'answer', text_value: 42 }, 'text_value'],
      ['object_value_is_partial on a text label', { output_resource_name: 'answer', text_value: 'Paris', object_value_is_partial: true }, 'object_value_is_partial'],
      ['a non-boolean object_value_is_partial', { output_resource_name: 'facts', object_value: {}, object_value_is_partial: 'yes' }, 'object_value_is_partial'],
      ['output_resource_name missing', { text_value: 'Paris' }, 'output_resource_name'],
      ['output_resource_name not a string', { output_resource_name: 7, text_value: 'Paris' }, 'output_resource_name'],
      ['output_resource_name empty', { output_resource_name: ' ', text_value: 'Paris' }, 'output_resource_name'],
      ['output_resource_name over 255 characters', { output_resource_name: 'a'.repeat(256), text_value: 'Paris' }, 'output_resource_name'],
      ['object_value nested over 64 levels', { output_resource_name: 'facts', object_value: nested(65) }, 'object_value'],
    ];
    for (const [name, body, path] of refused) {
      it(`refuses ${name} with 400 naming ${path}`, async () => {
        const run = await addRun();
        const error = await expectError(await send(`/v1/run/${run.id}/gold-labels`, 'POST', body), 400);
        assert.ok(
          error.details?.some((detail) => detail.path === path),
          JSON.stringify(error).slice(0, 500),
        );
        assert.deepEqual(await (await app.request(`/v1/run/${run.id}/gold-labels`)).json(), [], 'nothing was stored');
      });
    }

    it('refuses an object_value nested 200000 levels deep with 400, not a crash', async () => {
      const run = await addRun();
      // Written as text: JSON.stringify itself cannot go that deep.
      const body = `{"output_resource_name":"facts","object_value":{"a":${'['.repeat(200_000)}${']'.repeat(200_000)}}}`;
      const response = await app.request(`/v1/run/${run.id}/gold-labels`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const error = await expectError(response, 400, /nested at most 64 levels/);
      assert.equal(error.details?.[0]?.path, 'object_value');
    });

    it('refuses a body over the JSON limit with 413 and malformed JSON with 400', async () => {
      const run = await addRun();
      await expectError(await send(`/v1/run/${run.id}/gold-labels`, 'POST', { output_resource_name: 'answer', text_value: 'x'.repeat(2 * 1024 * 1024) }), 413);
      const malformed = await app.request(`/v1/run/${run.id}/gold-labels`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"text_value"' });
      await expectError(malformed, 400);
    });
  });

  describe('output_resource_name must name an output of the run', () => {
    it('refuses a name the finished run does not have with 400 listing its outputs', async () => {
      const run = await addRun();
      const error = await expectError(
        await send(`/v1/run/${run.id}/gold-labels`, 'POST', { output_resource_name: 'summary', text_value: 'x' }),
        400,
        /'summary' is not an output of run .*; its outputs are: answer, facts/,
      );
      assert.equal(error.details?.[0]?.path, 'output_resource_name');
    });

    it('refuses any name for a finished run without outputs', async () => {
      const run = await addRun({ status: 'failed', outputs: [], error: { code: 'model_error', message: 'boom' } });
      await expectError(await send(`/v1/run/${run.id}/gold-labels`, 'POST', { output_resource_name: 'answer', text_value: 'x' }), 400, /has no outputs/);
    });

    for (const status of ['queued', 'running'] as const) {
      it(`answers 409 naming the state while the run is ${status}`, async () => {
        const run = await addRun({ status, completed_at: null, outputs: [] });
        await expectError(
          await send(`/v1/run/${run.id}/gold-labels`, 'POST', { output_resource_name: 'answer', text_value: 'x' }),
          409,
          new RegExp(`is ${status}`),
        );
      });
    }
  });

  describe('PATCH', () => {
    it('changes the given fields, keeps the rest and records who changed it', async () => {
      const run = await addRun();
      const label = await createLabel(run.id, { output_resource_name: 'answer', text_value: 'Paris' });
      await clock.advance(5);
      const response = await send(`/v1/run/${run.id}/gold-label/${label.id}`, 'PATCH', { text_value: 'Paris, France' });
      assert.equal(response.status, 200);
      const changed = (await response.json()) as Label;
      assert.equal(changed.text_value, 'Paris, France');
      assert.equal(changed.output_resource_name, 'answer');
      assert.equal(changed.created_at, label.created_at);
      assert.equal(changed.updated_at, clock.now().toISOString());
      assert.ok(changed.updated_at > label.updated_at);
      assert.equal(changed.updated_by, await clientIdOf());
      assert.deepEqual(await (await app.request(`/v1/run/${run.id}/gold-label/${label.id}`)).json(), changed);
    });

    it('switches between text and object only when the other value is cleared', async () => {
      const run = await addRun();
      const label = await createLabel(run.id, { output_resource_name: 'answer', text_value: 'Paris' });
      const path = `/v1/run/${run.id}/gold-label/${label.id}`;
      await expectError(await send(path, 'PATCH', { object_value: { city: 'Paris' } }), 400, /exactly one of text_value and object_value/);
      await expectError(await send(path, 'PATCH', { text_value: null }), 400, /exactly one/);

      const toObject = await send(path, 'PATCH', { output_resource_name: 'facts', text_value: null, object_value: { city: 'Paris' }, object_value_is_partial: true });
      assert.equal(toObject.status, 200);
      const object = (await toObject.json()) as Label;
      assert.deepEqual([object.output_resource_name, object.text_value, object.object_value, object.object_value_is_partial], ['facts', null, { city: 'Paris' }, true]);

      const newObject = (await (await send(path, 'PATCH', { object_value: { city: 'Lyon' } })).json()) as Label;
      assert.equal(newObject.object_value_is_partial, true, 'an object label keeps its flag');

      const toText = await send(path, 'PATCH', { output_resource_name: 'answer', text_value: 'Paris', object_value: null });
      assert.equal(toText.status, 200);
      const text = (await toText.json()) as Label;
      assert.deepEqual([text.text_value, text.object_value, text.object_value_is_partial], ['Paris', null, false]);
      await expectError(await send(path, 'PATCH', { object_value_is_partial: true }), 400, /object_value_is_partial applies only/);
    });

    it('checks a new output_resource_name against the run’s outputs', async () => {
      const run = await addRun();
      const label = await createLabel(run.id, { output_resource_name: 'answer', text_value: 'Paris' });
      await expectError(await send(`/v1/run/${run.id}/gold-label/${label.id}`, 'PATCH', { output_resource_name: 'nope' }), 400, /its outputs are: answer, facts/);
      await expectError(await send(`/v1/run/${run.id}/gold-label/${label.id}`, 'PATCH', { output_resource_name: 42 }), 400);
      await expectError(await send(`/v1/run/${run.id}/gold-label/${label.id}`, 'PATCH', [1]), 400);
    });

    it('keeps both changes of two racing updates', async () => {
      const run = await addRun();
      const label = await createLabel(run.id, { output_resource_name: 'facts', object_value: { a: 1 } });
      const service = app.runloom.goldLabels;
      await Promise.all([
        service.update('acct-a', run.id, label.id, { object_value_is_partial: true }, 'first'),
        service.update('acct-a', run.id, label.id, { output_resource_name: 'answer' }, 'second'),
      ]);
      const final = await service.get('acct-a', run.id, label.id);
      assert.deepEqual([final.object_value_is_partial, final.output_resource_name], [true, 'answer'], 'an update was lost');
    });
  });

  describe('DELETE', () => {
    it('deletes a label and answers {id}; it is gone afterwards', async () => {
      const run = await addRun();
      const label = await createLabel(run.id, { output_resource_name: 'answer', text_value: 'Paris' });
      const keep = await createLabel(run.id, { output_resource_name: 'answer', text_value: 'Paris!' });
      const response = await app.request(`/v1/run/${run.id}/gold-label/${label.id}`, { method: 'DELETE' });
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), { id: label.id });
      await expectError(await app.request(`/v1/run/${run.id}/gold-label/${label.id}`), 404);
      await expectError(await app.request(`/v1/run/${run.id}/gold-label/${label.id}`, { method: 'DELETE' }), 404);
      assert.deepEqual(await (await app.request(`/v1/run/${run.id}/gold-labels`)).json(), [keep]);
    });
  });

  describe('not found and account isolation', () => {
    it('answers 404 on every route for another account’s run and label, and changes nothing', async () => {
      const run = await addRun({ account_id: 'acct-a' });
      const label = await createLabel(run.id, { output_resource_name: 'answer', text_value: 'Paris' });
      const labelPath = `/v1/run/${run.id}/gold-label/${label.id}`;
      const attempts: [string, string, unknown][] = [
        [`/v1/run/${run.id}/gold-labels`, 'POST', { output_resource_name: 'answer', text_value: 'x' }],
        [`/v1/run/${run.id}/gold-labels`, 'GET', undefined],
        [labelPath, 'GET', undefined],
        [labelPath, 'PATCH', { text_value: 'hijacked' }],
        [labelPath, 'DELETE', undefined],
      ];
      for (const [path, method, body] of attempts) {
        const response =
          body === undefined ? await app.request(path, { method, account: 'acct-b' }) : await send(path, method, body, 'acct-b');
        await expectError(response, 404);
      }
      assert.deepEqual(await (await app.request(labelPath)).json(), label);
    });

    it('answers 404 for a label addressed under another run of the same account', async () => {
      const run = await addRun();
      const otherRun = await addRun();
      const label = await createLabel(run.id, { output_resource_name: 'answer', text_value: 'Paris' });
      const wrongPath = `/v1/run/${otherRun.id}/gold-label/${label.id}`;
      await expectError(await app.request(wrongPath), 404);
      await expectError(await send(wrongPath, 'PATCH', { text_value: 'x' }), 404);
      await expectError(await app.request(wrongPath, { method: 'DELETE' }), 404);
      assert.equal((await app.request(`/v1/run/${run.id}/gold-label/${label.id}`)).status, 200);
    });

    it('answers 404 for runs and labels that do not exist and for ids that are not UUIDs', async () => {
      const run = await addRun();
      const missingRun = randomUUID();
      const paths: [string, string][] = [
        [`/v1/run/${missingRun}/gold-labels`, 'GET'],
        [`/v1/run/${missingRun}/gold-labels`, 'POST'],
        [`/v1/run/${run.id}/gold-label/${randomUUID()}`, 'GET'],
        [`/v1/run/${run.id}/gold-label/${randomUUID()}`, 'PATCH'],
        [`/v1/run/${run.id}/gold-label/${randomUUID()}`, 'DELETE'],
        ['/v1/run/not-a-uuid/gold-labels', 'GET'],
        ['/v1/run/not-a-uuid/gold-labels', 'POST'],
        [`/v1/run/${run.id}/gold-label/42`, 'GET'],
        [`/v1/run/${run.id}/gold-label/42`, 'PATCH'],
        [`/v1/run/${run.id}/gold-label/${'f'.repeat(5000)}`, 'DELETE'],
        [`/v1/run/%27%20OR%201=1--/gold-label/${randomUUID()}`, 'GET'],
      ];
      for (const [path, method] of paths) {
        const body = method === 'POST' || method === 'PATCH' ? { output_resource_name: 'answer', text_value: 'x' } : undefined;
        const response = body === undefined ? await app.request(path, { method }) : await send(path, method, body);
        await expectError(response, 404);
      }
    });
  });

  it('needs a bearer token on every gold label route', async () => {
    const run = await addRun();
    const labelPath = `/v1/run/${run.id}/gold-label/${randomUUID()}`;
    for (const [method, path] of [
      ['POST', `/v1/run/${run.id}/gold-labels`],
      ['GET', `/v1/run/${run.id}/gold-labels`],
      ['GET', labelPath],
      ['PATCH', labelPath],
      ['DELETE', labelPath],
    ] as const) {
      const response = await app.runloom.handle(new Request(`http://runloom.test${path}`, { method }));
      assert.equal(response.status, 401, `${method} ${path}`);
    }
  });

  it('documents every gold label route in the OpenAPI document', async () => {
    const document = (await (await app.request('/v1/openapi.json')).json()) as { paths: Record<string, Record<string, unknown>> };
    assert.ok(document.paths['/v1/run/{run_id}/gold-labels']?.post);
    assert.ok(document.paths['/v1/run/{run_id}/gold-labels']?.get);
    for (const method of ['get', 'patch', 'delete']) assert.ok(document.paths['/v1/run/{run_id}/gold-label/{gold_label_id}']?.[method], method);
  });
});

/** `{a: {a: … {} }}` nested `depth` levels, built without recursion. */
function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let level = 1; level < depth; level += 1) value = { a: value };
  return value;
}
