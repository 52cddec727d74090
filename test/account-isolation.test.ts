import assert from 'node:assert/strict';
import { startFakeVendor, type FakeVendorServer } from '../packages/core/src/testing/fake-vendors';
import { createAccountRecords, FIXTURE_THREAD } from './support/account-records';
import { answerText } from './support/event-stream';
import { startTestRunloom, type TestRunloom } from './support/harness';
import { sampleFromSchema } from './support/json-schema-sample';
import { fillPath, isIdParam, jsonBodySchema, recordKindOf, requiredQueryOf, routeCatalog, type CatalogRoute } from './support/route-catalog';
import { SeededRandom } from './support/seeded-random';

/**
 * docs/api.md#authentication: an id of another account answers exactly like an id that does not exist
 * (404), on every route, for every record kind. Routes are read from the router, so a route added later is
 * checked as soon as it is registered; a record kind this file cannot make fails the first test.
 */

type Owner = 'owner' | 'other';
const ACCOUNTS: Record<Owner, string> = { owner: 'acct-iso-owner', other: 'acct-iso-other' };

/** Ids of one record of each kind, by kind (`runnable`, `run`, `gold_label`, …). */
type RecordIds = Map<string, string>;

/**
 * Bodies that a route accepts from the caller's own records, where a sample of the route's schema
 * cannot know enough (the runnable's placeholder names, the run's output names).
 */
const VALID_BODIES: Record<string, (own: RecordIds, vendor: FakeVendorServer) => unknown> = {
  // Kept enabled on the fake: routes probed later (a thread's reply) call the vendor.
  'PUT /v1/llm-provider/{provider}': (_own, vendor) => ({ enabled: true, credentials: vendor.credentials }),
  'POST /v1/runnable/{id}/runs': (own) => ({ resources: [{ name: 'document', resource: own.get('resource') }] }),
  'POST /v1/run/{run_id}/gold-labels': () => ({ output_resource_name: 'output', text_value: 'another label' }),
  'PATCH /v1/run/{run_id}/gold-label/{gold_label_id}': () => ({ text_value: 'changed' }),
  'PATCH /v1/runnable/{id}': () => ({ description: 'changed' }),
  'PATCH /v1/resource/{id}': () => ({ tags: ['changed'] }),
  'POST /workspace/{workspaceId}/threads/stream': () => ({ threadId: FIXTURE_THREAD, message: 'Hello', model: { provider: 'openai', model: 'gpt-4o-mini' } }),
  // The fixture's command is named as a sampled trigger is; a new one takes another name.
  'POST /workspace/{workspaceId}/commands': () => ({ trigger: 'made-by-the-test', type: 'prompt', template: 'Say hello' }),
  'POST /workspace/{workspaceId}/command/{trigger}/execute': () => ({ args: [] }),
  'POST /workspace/{workspaceId}/processes/{processId}/runs': () => ({ spec: { name: 'one wait', phases: [{ id: 'p', name: 'P', tasks: [{ id: 't', name: 'T', type: 'wait', input: { seconds: 0 } }] }] } }),
};

interface Answer {
  status: number;
  text: string;
}

describe('account isolation: another account’s id answers exactly as a missing one, on every route', function () {
  this.timeout(60_000);

  const random = new SeededRandom(0x1507);
  const ids: Record<Owner, RecordIds> = { owner: new Map(), other: new Map() };
  /** Kinds named by an id in a route's path that no fixture or creation route could make. */
  const unmakeable: string[] = [];
  /** For each route that takes a JSON body: one the other account's own records accept. */
  const validBodies = new Map<string, unknown>();
  let t: TestRunloom;
  let vendor: FakeVendorServer;
  let catalog: CatalogRoute[];
  let ownerSnapshot: Map<string, string>;

  before(async () => {
    vendor = await startFakeVendor('openai');
    t = await startTestRunloom({ rateLimit: 0, allowPrivateNetwork: true });
    catalog = (await routeCatalog(t)).routes;
    for (const owner of ['owner', 'other'] as const) {
      const records = await createAccountRecords(t, { account: ACCOUNTS[owner], vendor });
      for (const [kind, id] of Object.entries(records)) ids[owner].set(kind, id);
    }
    const kinds = new Set(catalog.flatMap((route) => route.pathParams.filter(isIdParam).map((name) => recordKindOf(route.definition.path, name))));
    for (const kind of kinds) {
      if (ids.owner.has(kind)) continue;
      for (const owner of ['owner', 'other'] as const) {
        const id = await createThroughRoute(kind, owner);
        if (id === undefined) unmakeable.push(kind);
        else ids[owner].set(kind, id);
      }
    }
    for (const route of catalog.filter((candidate) => candidate.definition.body && 'json' in candidate.definition.body && canFill(candidate))) {
      const body = await findValidBody(route);
      if (body !== undefined) validBodies.set(route.key, body);
    }
    ownerSnapshot = await snapshot();
  });

  after(async () => {
    await t?.close();
    await vendor?.close();
  });

  /** Whether every id in the route's path names a kind both accounts have a record of. */
  function canFill(route: CatalogRoute): boolean {
    return route.pathParams.filter(isIdParam).every((name) => ids.owner.has(recordKindOf(route.definition.path, name)));
  }

  /** Whether the route names records by id: in its path, or as a top-level field of its body. */
  function namesRecords(route: CatalogRoute): boolean {
    const fields = Object.keys((jsonBodySchema(route)?.properties ?? {}) as object);
    return canFill(route) && (route.pathParams.some(isIdParam) || fields.some(isIdParam) || VALID_BODIES[route.key] !== undefined);
  }

  /** The route's path with `owner`'s ids, where `overrides` does not give a value. */
  function pathOf(route: CatalogRoute, owner: Owner, overrides: Record<string, string> = {}): string {
    const values = Object.fromEntries(
      route.pathParams.map((name) => {
        if (overrides[name] !== undefined) return [name, overrides[name]];
        if (isIdParam(name)) return [name, ids[owner].get(recordKindOf(route.definition.path, name))!];
        const schema = route.operation?.parameters?.find((parameter) => parameter.in === 'path' && parameter.name === name)?.schema;
        return [name, encodeURIComponent(String(Array.isArray(schema?.enum) ? schema.enum[0] : sampleFromSchema(schema, random)))];
      }),
    );
    return fillPath(route.definition.path, values);
  }

  async function call(route: CatalogRoute, path: string, caller: Owner, body?: unknown, query = ''): Promise<Answer> {
    const init: RequestInit & { account: string } = { method: route.definition.method, account: ACCOUNTS[caller] };
    if (body !== undefined) {
      init.headers = { 'content-type': 'application/json' };
      init.body = JSON.stringify(body);
    }
    const response = await t.request(`${path}${query || requiredQueryOf(route)}`, init);
    return { status: response.status, text: await answerText(response) };
  }

  /** The id property names a sample fills with `owner`'s records (`gold_label_id` → its gold label). */
  function idsOf(owner: Owner, route: CatalogRoute): (property: string) => string | undefined {
    return (property) => (isIdParam(property) ? ids[owner].get(recordKindOf(route.definition.path, property)) : undefined);
  }

  /**
   * Makes a record of `kind` in `owner`'s account through the route that creates it
   * (`POST …/evaluations` for `evaluation`), with bodies sampled from its schema: its id, or
   * undefined when no such route accepts any sample.
   */
  async function createThroughRoute(kind: string, owner: Owner): Promise<string | undefined> {
    const creator = catalog.find(
      (route) => route.definition.method === 'POST' && route.definition.path.split('/').at(-1)?.replace(/-/g, '_') === `${kind}s` && canFill(route),
    );
    if (!creator) return undefined;
    for (let attempt = 0; attempt < 30; attempt++) {
      const body = sampleFromSchema(jsonBodySchema(creator), random, { idFor: idsOf(owner, creator) });
      const answer = await call(creator, pathOf(creator, owner), owner, body);
      // v1 answers the record, workspace routes `{data: record}` (docs/api.md#workspaces).
      if (answer.status >= 200 && answer.status < 300) {
        const created = JSON.parse(answer.text) as { id?: string; data?: { id: string } };
        return created.data?.id ?? created.id;
      }
    }
    return undefined;
  }

  /** A body the route accepts on the other account's own records (tried there, so known to be valid). */
  async function findValidBody(route: CatalogRoute): Promise<unknown> {
    const explicit = VALID_BODIES[route.key];
    const candidates = [
      ...(explicit ? [explicit(ids.other, vendor)] : []),
      ...Array.from({ length: 30 }, () => sampleFromSchema(jsonBodySchema(route), random, { idFor: idsOf('other', route) })),
    ];
    for (const body of candidates) {
      const answer = await call(route, pathOf(route, 'other'), 'other', body);
      if (answer.status >= 200 && answer.status < 300) return body;
    }
    return undefined;
  }

  /** `answer` with `id` replaced, so two answers about different missing ids compare equal. */
  function normalized(answer: Answer, id: string): Answer {
    return { status: answer.status, text: answer.text.split(id).join('<id>') };
  }

  /**
   * Every GET the owner can make of its own records (routes with ids, and its account-wide
   * listings): the answers that must read the same after the other account's calls.
   */
  async function snapshot(): Promise<Map<string, string>> {
    const answers = new Map<string, string>();
    for (const route of catalog) {
      const { definition } = route;
      const ownedListing = definition.path.startsWith('/v1/') && !definition.public && route.pathParams.length === 0;
      if (definition.method !== 'GET' || !canFill(route) || (route.pathParams.length === 0 && !ownedListing)) continue;
      const answer = await call(route, pathOf(route, 'owner'), 'owner');
      answers.set(route.key, `${answer.status} ${answer.text}`);
    }
    return answers;
  }

  it('can make a record of every kind that a route names by id', () => {
    assert.deepEqual([...new Set(unmakeable)], [], 'add a fixture (test/support/account-records.ts) for these kinds');
    for (const route of catalog.filter((candidate) => namesRecords(candidate) && candidate.definition.body && 'json' in candidate.definition.body)) {
      assert.ok(validBodies.has(route.key), `${route.key}: no body found that the route accepts; add one to VALID_BODIES`);
    }
  });

  it('answers 404, exactly as for an id that does not exist, when a path names another account’s record', async () => {
    const findings: string[] = [];
    // Public routes carry their own credential instead of an account (a signed upload URL names its account).
    for (const route of catalog.filter((candidate) => !candidate.definition.public && candidate.pathParams.some(isIdParam) && canFill(candidate))) {
      const idParams = route.pathParams.filter(isIdParam);
      // Every id the owner's, and (with more than one) each id alone the owner's, the rest the caller's own.
      const foreignSets = idParams.length > 1 ? [idParams, ...idParams.map((name) => [name])] : [idParams];
      for (const foreign of foreignSets) {
        const ownerIds = Object.fromEntries(foreign.map((name) => [name, ids.owner.get(recordKindOf(route.definition.path, name))!]));
        const missingIds = Object.fromEntries(foreign.map((name) => [name, random.uuid(7)]));
        const body = validBodies.get(route.key);
        const foreignAnswer = await call(route, pathOf(route, 'other', ownerIds), 'other', body);
        const missingAnswer = await call(route, pathOf(route, 'other', missingIds), 'other', body);
        const label = `${route.key} with the owner's ${foreign.join(' and ')}`;
        if (foreignAnswer.status !== 404) findings.push(`${label}: ${foreignAnswer.status} ${foreignAnswer.text.slice(0, 200)}`);
        const foreignText = foreign.reduce((answer, name) => normalized(answer, ownerIds[name]!), foreignAnswer);
        const missingText = foreign.reduce((answer, name) => normalized(answer, missingIds[name]!), missingAnswer);
        if (JSON.stringify(foreignText) !== JSON.stringify(missingText)) {
          findings.push(`${label} answers unlike a missing id: ${JSON.stringify(foreignText).slice(0, 200)} vs ${JSON.stringify(missingText).slice(0, 200)}`);
        }
      }
    }
    assert.deepEqual(findings, []);
  });

  it('answers exactly as for a missing id when a body or a query names another account’s record', async () => {
    const findings: string[] = [];
    let checked = 0;
    for (const route of catalog.filter(canFill)) {
      const body = validBodies.get(route.key);
      // Each id of the caller's own records in its valid body, swapped for the owner's, then for a missing one.
      const bodyText = body === undefined ? '' : JSON.stringify(body);
      for (const [kind, ownId] of ids.other) {
        if (!bodyText.includes(ownId)) continue;
        const missingId = random.uuid(7);
        const foreign = await call(route, pathOf(route, 'other'), 'other', JSON.parse(bodyText.split(ownId).join(ids.owner.get(kind)!)));
        const missing = await call(route, pathOf(route, 'other'), 'other', JSON.parse(bodyText.split(ownId).join(missingId)));
        checked += 1;
        if (foreign.status < 400) findings.push(`${route.key} accepts the owner's ${kind} in its body: ${foreign.status}`);
        if (JSON.stringify(normalized(foreign, ids.owner.get(kind)!)) !== JSON.stringify(normalized(missing, missingId))) {
          findings.push(`${route.key} (${kind} in the body) answers unlike a missing id: ${foreign.status} ${foreign.text.slice(0, 160)} vs ${missing.status} ${missing.text.slice(0, 160)}`);
        }
      }
      // Each id-like query parameter (`?runnable_id=`) with the owner's record, then with a missing one.
      for (const parameter of route.operation?.parameters ?? []) {
        if (parameter.in !== 'query' || !isIdParam(parameter.name)) continue;
        const ownerId = ids.owner.get(recordKindOf(route.definition.path, parameter.name));
        if (ownerId === undefined) continue;
        const missingId = random.uuid(7);
        const foreign = await call(route, pathOf(route, 'other'), 'other', body, `?${parameter.name}=${ownerId}`);
        const missing = await call(route, pathOf(route, 'other'), 'other', body, `?${parameter.name}=${missingId}`);
        checked += 1;
        if (JSON.stringify(normalized(foreign, ownerId)) !== JSON.stringify(normalized(missing, missingId))) {
          findings.push(`${route.key}?${parameter.name}= answers unlike a missing id: ${foreign.text.slice(0, 160)} vs ${missing.text.slice(0, 160)}`);
        }
      }
    }
    assert.ok(checked >= 2, `only ${checked} body or query ids checked`);
    assert.deepEqual(findings, []);
  });

  it('lists none of another account’s records', async () => {
    const ownerIds = [...ids.owner.values()];
    for (const route of catalog.filter((candidate) => candidate.definition.method === 'GET' && candidate.pathParams.length === 0 && !candidate.definition.public)) {
      const answer = await call(route, route.definition.path, 'other');
      assert.deepEqual(
        ownerIds.filter((id) => answer.text.includes(id)),
        [],
        `${route.key} as the other account names the owner's records`,
      );
    }
  });

  it('leaves the owner’s records as they were after all of the other account’s calls', async () => {
    const after = await snapshot();
    assert.ok(ownerSnapshot.size >= 5, `only ${ownerSnapshot.size} reads in the snapshot`);
    for (const [key, before] of ownerSnapshot) {
      // 204: a read with nothing to show (no reply streaming on the fixture thread) still reached it.
      assert.ok(/^20[04] /.test(before), `${key} reads the owner's record: ${before.slice(0, 200)}`);
      assert.equal(after.get(key), before, `${key} changed`);
    }
  });
});
