import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Container } from 'inversify';
import { runRecord } from '../../../../../test/fixtures/run-records';
import { MemoryDatabase } from '../../adapters/memory/memory-database';
import { Database } from '../../ports/database';
import { Migrations } from '../storage/migrations';
import { toRunView } from './run-record';
import { RunRepository } from './run-repository';
import { runsModule } from './runs-module';

describe('RunRepository', () => {
  let runs: RunRepository;

  beforeEach(async () => {
    const container = new Container({ defaultScope: 'Singleton' });
    const database = new MemoryDatabase();
    container.bind(Database).toConstantValue(database);
    await container.loadAsync(runsModule);
    await database.migrate(container.getAll<Migrations>(Migrations).flat());
    runs = container.get(RunRepository);
  });

  it('reads a run of the same account and treats another account’s run as missing', async () => {
    const run = runRecord({ account_id: 'acct-a' });
    await runs.insert(run);
    assert.deepEqual(await runs.get('acct-a', run.id), run);
    assert.equal(await runs.get('acct-b', run.id), undefined);
  });

  it('finds the active runs that embed a resource (the resource delete check)', async () => {
    const resourceId = randomUUID();
    const embedded = { name: 'doc', resource: { id: resourceId, name: 'a.txt', mime_type: 'text/plain', sha256: 'b'.repeat(64), size_bytes: 3 } };
    await runs.insert(runRecord({ status: 'running', resources: [embedded], resource_ids: [resourceId] }));
    await runs.insert(runRecord({ status: 'succeeded', resources: [embedded], resource_ids: [resourceId] }));
    await runs.insert(runRecord({ status: 'queued' }));
    const active = await runs.find('acct-a', { where: { status: { in: ['queued', 'running'] }, resource_ids: { hasAll: [resourceId] } } });
    assert.deepEqual(
      active.map((run) => run.status),
      ['running'],
    );
  });

  it('keeps engine-only fields out of the public view', () => {
    const view = toRunView(runRecord({ sealed_callback_headers: 'sealed' }));
    assert.deepEqual(Object.keys(view), [
      'id', 'account_id', 'runnable_id', 'runnable_sha256', 'status', 'created_at', 'started_at', 'completed_at',
      'timeout_seconds', 'telemetry_strategy', 'telemetry_enabled', 'resources', 'outputs', 'error', 'usage', 'callback', 'trace',
    ]);
  });
});
