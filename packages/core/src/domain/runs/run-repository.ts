import { inject, injectable } from 'inversify';
import { Database, type Migration } from '../../ports/database';
import { Repository } from '../storage/repository';
import type { RunRecord } from './run-record';

export const RUNS_COLLECTION = 'runs';

export const runsMigrations: Migration[] = [
  {
    id: 'runs/001-create',
    steps: [
      {
        createCollection: RUNS_COLLECTION,
        fields: { account_id: 'text', runnable_id: 'text', status: 'text', created_at: 'text', resource_ids: 'json' },
      },
    ],
  },
];

/** Account-scoped access to run records; another account's run reads as missing. */
@injectable()
export class RunRepository extends Repository<RunRecord> {
  constructor(@inject(Database) database: Database) {
    super(database, RUNS_COLLECTION);
  }
}
