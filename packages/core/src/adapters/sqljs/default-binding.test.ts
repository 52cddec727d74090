import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Container } from 'inversify';
import { defaultConfig, RunloomConfig } from '../../config';
import { Database } from '../../ports/database';
import { platformModule } from '../platform-module';
import { SqlJsDatabase } from './sqljs-database';

describe('the default Database binding', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(`${os.tmpdir()}/runloom-`);
  });
  afterEach(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function resolveDatabase(config: Partial<RunloomConfig> = {}): Promise<Database> {
    const container = new Container({ defaultScope: 'Singleton' });
    container.bind(RunloomConfig).toConstantValue({ ...defaultConfig, dataDir, ...config });
    await container.loadAsync(platformModule);
    return container.getAsync<Database>(Database);
  }

  it('is the sql.js store in <dataDir>/db, and what it stores is there after a restart', async () => {
    const database = await resolveDatabase();
    assert.ok(database instanceof SqlJsDatabase);
    await database.migrate([{ id: 'binding/001', steps: [{ createCollection: 'things', fields: {} }] }]);
    await database.write([{ op: 'insert', collection: 'things', doc: { id: 't1' } }]);
    await database.close();
    assert.ok(existsSync(path.join(dataDir, 'db')));
    const reopened = await resolveDatabase();
    assert.deepEqual(await reopened.get('things', 't1'), { id: 't1' });
    await reopened.close();
  });

  it('refuses a databaseUrl it has no adapter for instead of storing elsewhere', async () => {
    await assert.rejects(resolveDatabase({ databaseUrl: 'mysql://localhost/runloom' }), /databaseUrl must be a postgres/);
  });
});
