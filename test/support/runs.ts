import assert from 'node:assert/strict';
import type { FakeVendorServer } from '../../packages/core/src/testing/fake-vendors';
import type { TestRunloom } from './harness';

/** HTTP helpers for tests of runs: providers, runnables, resources, submissions and polling. */

export type Json = Record<string, any>;

const FINAL = new Set(['succeeded', 'failed', 'cancelled', 'timed_out']);

export function jsonInit(method: string, body: unknown, account?: string): RequestInit & { account?: string } {
  return { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), account };
}

/** Points the account's configuration of the fake's provider at the fake. */
export async function useFakeVendor(t: TestRunloom, fake: FakeVendorServer, account?: string, enabled = true): Promise<void> {
  const response = await t.request(`/v1/llm-provider/${fake.provider}`, jsonInit('PUT', { enabled, credentials: fake.credentials }, account));
  assert.ok(response.status === 200 || response.status === 201, await response.text());
}

export async function createRunnable(t: TestRunloom, config: Json, account?: string): Promise<Json> {
  const response = await t.request('/v1/runnables', jsonInit('POST', { name: config.name ?? 'test runnable', config_content_parsed: config }, account));
  assert.equal(response.status, 201, await response.clone().text());
  return (await response.json()) as Json;
}

/** Uploads raw bytes as a resource of `account`; `metadata` is set afterwards with PATCH. */
export async function uploadResource(
  t: TestRunloom,
  content: string | Uint8Array<ArrayBuffer>,
  name: string,
  type: string,
  options: { account?: string; metadata?: Json } = {},
): Promise<Json> {
  const response = await t.request(`/v1/resources?name=${encodeURIComponent(name)}&directory_path=/`, {
    method: 'POST',
    headers: { 'content-type': type },
    body: content,
    account: options.account,
  });
  assert.equal(response.status, 201, await response.clone().text());
  const resource = (await response.json()) as Json;
  if (!options.metadata) return resource;
  const patched = await t.request(`/v1/resource/${resource.id}`, jsonInit('PATCH', { metadata: options.metadata }, options.account));
  assert.equal(patched.status, 200, await patched.clone().text());
  return (await patched.json()) as Json;
}

export function submit(t: TestRunloom, runnableId: string, body: Json = {}, options: { mode?: string; account?: string } = {}): Promise<Response> {
  const query = options.mode === undefined ? '' : `?mode=${options.mode}`;
  return t.request(`/v1/runnable/${runnableId}/runs${query}`, jsonInit('POST', body, options.account));
}

/** Submits async and answers the run id (asserting the 202). */
export async function submitAsync(t: TestRunloom, runnableId: string, body: Json = {}, account?: string): Promise<string> {
  const response = await submit(t, runnableId, body, { account });
  assert.equal(response.status, 202, await response.clone().text());
  return ((await response.json()) as Json).id as string;
}

export async function getRun(t: TestRunloom, id: string, account?: string): Promise<Json> {
  const response = await t.request(`/v1/run/${id}`, { account });
  assert.equal(response.status, 200, await response.clone().text());
  return (await response.json()) as Json;
}

/** Polls until the run is in one of `statuses` (default: any final one), within `timeoutMs`. */
export async function waitForRun(t: TestRunloom, id: string, options: { account?: string; statuses?: string[]; timeoutMs?: number } = {}): Promise<Json> {
  const wanted = options.statuses ? new Set(options.statuses) : FINAL;
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  for (;;) {
    const run = await getRun(t, id, options.account);
    if (wanted.has(run.status)) return run;
    if (Date.now() > deadline) assert.fail(`run ${id} is still ${run.status} after ${options.timeoutMs ?? 10_000} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A prompt runnable configuration for the fake's model. */
export function promptConfig(fake: FakeVendorServer, prompt: Json = { messages: [{ role: 'user', content: 'Say hello' }] }, extra: Json = {}): Json {
  return { type: 'prompt', prompt, llms: [{ provider: fake.provider, model: fake.model }], ...extra };
}
