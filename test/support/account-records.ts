import { SAMPLE_FILE_PATH } from './route-catalog';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import type { FakeVendorServer } from '../../packages/core/src/testing/fake-vendors';
import type { TestRunloom } from './harness';
import { waitUntil } from './wait';

/** The thread each account's workspace holds (see `createAccountRecords`). */
export const FIXTURE_THREAD = 'x-sample';
/** The smallest document PDF readers open, for the file routes' sample path. */
const MINIMAL_PDF = '%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n';

/** Ids of one record of each kind an account can own, keyed by the kind route parameters name. */
export type AccountRecords = Record<
  'runnable' | 'run' | 'resource' | 'gold_label' | 'workspace' | 'template' | 'process_run' | 'command_execution',
  string
>;

export interface AccountRecordOptions {
  account: string;
  /** The fake the account's runnable calls; its provider is configured in the account. */
  vendor: FakeVendorServer;
  /** Sent with the run's callback (secret values that must never be answered back). */
  callback?: { url: string; headers: Record<string, string> };
}

function json(method: string, body: unknown, account: string): RequestInit & { account: string } {
  return { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), account };
}

async function created(response: Promise<Response>, status = 201): Promise<Record<string, any>> {
  const answer = await response;
  const text = await answer.text();
  assert.equal(answer.status, status, text);
  return JSON.parse(text) as Record<string, any>;
}

/**
 * One record of every kind in `account`, made through HTTP the way a client makes them: the
 * provider configuration, a prompt runnable on the fake vendor, a text resource, a finished run
 * of the runnable on the resource, a gold label of the run's output, a workspace template with one
 * file and a workspace made from it, a process run in it waiting on an approval, a thread, a prompt
 * command with a finished execution, and a file.
 */
export async function createAccountRecords(t: TestRunloom, options: AccountRecordOptions): Promise<AccountRecords> {
  const { account, vendor } = options;
  const provider = await t.request(`/v1/llm-provider/${vendor.provider}`, json('PUT', { enabled: true, credentials: vendor.credentials }, account));
  assert.ok(provider.status === 200 || provider.status === 201, await provider.text());
  const runnable = await created(
    t.request(
      '/v1/runnables',
      json(
        'POST',
        {
          name: `summarize for ${account}`,
          tags: ['fixture'],
          config_content_parsed: {
            name: 'summarize',
            prompt: { messages: [{ role: 'user', content: 'Summarize {{document}}' }] },
            llms: [{ model: `${vendor.provider}/${vendor.model}` }],
            inputs: [{ name: 'document', mime_types: ['text/plain'] }],
          },
        },
        account,
      ),
    ),
  );
  const resource = await created(
    t.request('/v1/resources?name=notes.txt&directory_path=/fixtures', {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: `notes of ${account}`,
      account,
    }),
  );
  const runBody = {
    resources: [{ name: 'document', resource: resource.id }],
    ...(options.callback ? { callback_url: options.callback.url, callback_headers: options.callback.headers } : {}),
  };
  const run = await created(t.request(`/v1/runnable/${runnable.id}/runs?mode=sync`, json('POST', runBody, account)), 200);
  assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
  const output = (run.outputs as { name: string }[])[0];
  assert.ok(output, 'the fixture run has an output to label');
  const label = await created(
    t.request(`/v1/run/${run.id}/gold-labels`, json('POST', { output_resource_name: output.name, text_value: 'expected' }, account)),
  );
  const template = await created(
    t.request('/workspaces/templates', json('POST', { name: `notes of ${account}`, files: [{ path: 'README.md', content: `# ${account}\n` }] }, account)),
  );
  const workspace = await created(t.request('/workspaces', json('POST', { name: `workspace of ${account}`, template_id: template.data.id }, account)));
  // Connected to a repository, and a working copy (git init: reading and committing need no remote).
  const repository = { url: 'https://git.example.invalid/notes.git', author: { name: account, email: `${account}@example.test` } };
  await created(t.request(`/workspace/${workspace.data.id}/repository`, json('PUT', repository, account)));
  execFileSync('git', ['init', '--quiet', (await t.runloom.workspaces.files(account, workspace.data.id)).localRoot!]);
  const spec = { name: 'release', phases: [{ id: 'gate', name: 'Gate', tasks: [{ id: 'ship', name: 'Ship?', type: 'approval', input: { message: 'Ship it?' } }] }] };
  const processRun = await created(t.request(`/workspace/${workspace.data.id}/processes/release/runs`, json('POST', { spec }, account)));
  await created(t.request(`/workspace/${workspace.data.id}/processes/runs/${processRun.data.id}/start`, { method: 'POST', account }), 200);
  // Named as samples of a thread id come out (json-schema-sample.ts): a thread id is a name the
  // client gives within its workspace, not a record id, so routes filled with a sample reach it.
  await created(t.request(`/workspace/${workspace.data.id}/thread/${FIXTURE_THREAD}/save`, json('POST', { title: `notes of ${account}` }, account)));
  // A command named as samples of a trigger come out, and the file a required `path` names, for the same reason.
  const command = { trigger: FIXTURE_THREAD, type: 'prompt', template: 'Say hello', model: { provider: vendor.provider, model: vendor.model } };
  await created(t.request(`/workspace/${workspace.data.id}/commands`, json('POST', command, account)));
  const execution = await created(t.request(`/workspace/${workspace.data.id}/command/${FIXTURE_THREAD}/execute`, json('POST', { args: [] }, account)), 200);
  const executionPath = `/workspace/${workspace.data.id}/command/${FIXTURE_THREAD}/executions/${execution.data.runId}`;
  // Finished before anyone reads it, so reads of it do not change under a test.
  await waitUntil(
    async () => ['succeeded', 'failed', 'cancelled'].includes(((await (await t.request(executionPath, { account })).json()) as { data: { status: string } }).data.status),
    `the fixture command execution of ${account} to finish`,
  );
  await created(
    t.request(`/workspace/${workspace.data.id}/files?path=${SAMPLE_FILE_PATH}`, { method: 'POST', headers: { 'content-type': 'application/pdf' }, body: MINIMAL_PDF, account }),
  );
  return {
    runnable: runnable.id,
    run: run.id,
    resource: resource.id,
    gold_label: label.id,
    workspace: workspace.data.id,
    template: template.data.id,
    process_run: processRun.data.id,
    command_execution: execution.data.runId,
  };
}
