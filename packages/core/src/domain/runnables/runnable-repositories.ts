import { inject, injectable } from 'inversify';
import { Database, type Migration } from '../../ports/database';
import { Repository } from '../storage/repository';
import type { RunnableDoc, RunnableVersionDoc } from './runnable-record';

export const RUNNABLES_COLLECTION = 'runnables';
export const RUNNABLE_VERSIONS_COLLECTION = 'runnable_versions';

export const runnablesMigrations: Migration[] = [
  {
    id: 'runnables/001-create',
    steps: [
      {
        createCollection: RUNNABLES_COLLECTION,
        fields: { account_id: 'text', config_content_type: 'text', tags: 'json', revision: 'integer', created_at: 'text' },
      },
      { createCollection: RUNNABLE_VERSIONS_COLLECTION, fields: { account_id: 'text', runnable_id: 'text', version: 'integer' } },
    ],
  },
  {
    // Lists filter runnables by account (and type) and versions by runnable: these four indexes
    // served no query, and made a create's inserts a fifth slower on the embedded store.
    id: 'runnables/002-unindex-unsearched',
    steps: [
      { unindexField: { collection: RUNNABLES_COLLECTION, field: 'revision' } },
      { unindexField: { collection: RUNNABLES_COLLECTION, field: 'created_at' } },
      { unindexField: { collection: RUNNABLE_VERSIONS_COLLECTION, field: 'account_id' } },
      { unindexField: { collection: RUNNABLE_VERSIONS_COLLECTION, field: 'version' } },
    ],
  },
  {
    // A list by type is a list of one account's runnables (account_id is indexed): with this index
    // SQLite chose it instead, reading every account's runnables of that type.
    id: 'runnables/003-unindex-type',
    steps: [{ unindexField: { collection: RUNNABLES_COLLECTION, field: 'config_content_type' } }],
  },
];

/** Account-scoped runnables; another account's runnable reads as missing. */
@injectable()
export class RunnableRepository extends Repository<RunnableDoc> {
  constructor(@inject(Database) database: Database) {
    super(database, RUNNABLES_COLLECTION);
  }
}

/** The configuration history of runnables (`GET /v1/runnable/{id}/versions`). */
@injectable()
export class RunnableVersionRepository extends Repository<RunnableVersionDoc> {
  constructor(@inject(Database) database: Database) {
    super(database, RUNNABLE_VERSIONS_COLLECTION);
  }
}
