import assert from 'node:assert/strict';
import { startFakeVendor, type FakeVendorServer } from '../packages/core/src/testing/fake-vendors';
import { createAccountRecords } from './support/account-records';
import { isEventStream } from './support/event-stream';
import { startTestRunloom, type TestRunloom } from './support/harness';
import { fillPath, isIdParam, recordKindOf, routeCatalog, type CatalogRoute } from './support/route-catalog';

/**
 * Every route of the running server, read from its router (routes added later are covered too):
 * HEAD answers like GET without a body, and every answer carries `X-Content-Type-Options: nosniff`
 * (docs/api.md, "Conventions").
 */
describe('HEAD and nosniff on every route', function () {
  this.timeout(60_000);
  let t: TestRunloom;
  let vendor: FakeVendorServer;
  let catalog: CatalogRoute[];
  const ids = new Map<string, string>();

  before(async () => {
    vendor = await startFakeVendor('openai');
    t = await startTestRunloom({ allowPrivateNetwork: true, rateLimit: 0 });
    const records = await createAccountRecords(t, { account: 'acct-a', vendor });
    for (const [kind, id] of Object.entries(records)) ids.set(kind, id);
    const evaluation = await t.request(`/v1/run/${records.run}/evaluations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ gold_label_id: records.gold_label, method: 'exact' }),
    });
    assert.equal(evaluation.status, 201, await evaluation.clone().text());
    ids.set('evaluation', ((await evaluation.json()) as { id: string }).id);
    catalog = (await routeCatalog(t)).routes;
  });
  after(async () => {
    await t?.close();
    await vendor?.close();
  });

  /** The route's path with a record of this account in every id parameter, the fake's provider elsewhere. */
  function pathOf(route: CatalogRoute): string {
    const values = Object.fromEntries(
      route.pathParams.map((name) => [name, isIdParam(name) ? (ids.get(recordKindOf(route.definition.path, name)) ?? 'missing') : vendor.provider]),
    );
    return fillPath(route.definition.path, values);
  }

  /** Headers that differ between two answers to the same request by nature. */
  function comparable(response: Response): Record<string, string> {
    const headers = headerRecord(response.headers);
    delete headers['x-request-id'];
    delete headers.date;
    delete headers['content-length'];
    return headers;
  }

  it('answers HEAD on every GET route with the GET status and headers and no body', async () => {
    const gets = catalog.filter((route) => route.definition.method === 'GET');
    assert.ok(gets.length >= 15, `${gets.length} GET routes`);
    const differences: string[] = [];
    for (const route of gets) {
      const path = pathOf(route);
      const get = await t.request(path);
      // An event stream never ends: it has no length to compare, only its status and headers.
      const streaming = isEventStream(get);
      if (streaming) await get.body?.cancel();
      const body = streaming ? undefined : new Uint8Array(await get.arrayBuffer());
      const head = await t.request(path, { method: 'HEAD' });
      const headBody = head.body === null ? 0 : (await head.arrayBuffer()).byteLength;
      const expectedLength = get.headers.get('content-length') ?? (body ? String(body.byteLength) : null);
      if (head.status !== get.status) differences.push(`${route.key}: HEAD ${head.status}, GET ${get.status}`);
      else if (JSON.stringify(comparable(head)) !== JSON.stringify(comparable(get))) differences.push(`${route.key}: headers ${JSON.stringify(comparable(head))} ≠ ${JSON.stringify(comparable(get))}`);
      // The metrics count this very request: their length moves between two requests.
      else if (route.key === 'GET /metrics' ? !head.headers.has('content-length') : head.headers.get('content-length') !== expectedLength) differences.push(`${route.key}: Content-Length ${head.headers.get('content-length')} ≠ ${expectedLength}`);
      else if (headBody !== 0) differences.push(`${route.key}: HEAD has a ${headBody}-byte body`);
    }
    assert.deepEqual(differences, []);
  });

  it('sets X-Content-Type-Options: nosniff on the answer of every route, authenticated or not', async () => {
    const missing: string[] = [];
    for (const route of catalog) {
      const path = pathOf(route);
      for (const authorization of [undefined, 'Bearer forged']) {
        const response = await t.request(path, {
          method: route.definition.method,
          ...(authorization ? { headers: { authorization } } : {}),
          ...(route.definition.method === 'GET' || route.definition.method === 'DELETE' ? {} : { body: '{' }),
        });
        await response.body?.cancel();
        if (response.headers.get('x-content-type-options') !== 'nosniff') missing.push(`${route.key} → ${response.status}`);
      }
    }
    assert.deepEqual(missing, []);
  });
});

function headerRecord(headers: Headers): Record<string, string> {
  const record: Record<string, string> = {};
  headers.forEach((value, name) => {
    record[name] = value;
  });
  return record;
}
