import type { Database } from '../../ports/database';
import type { JobQueue } from '../../ports/job-queue';
import { META_COLLECTION } from '../storage/platform-migrations';
import type { Readiness } from './ops-routes';

/** Ready when the store answers a query and the job queue runs (docs/api.md#operations). */
export function storeAndQueueReadiness(database: Database, jobQueue: JobQueue): Readiness {
  return {
    check: async () => ({ store: await storeAnswers(database), queue: jobQueue.running }),
  };
}

async function storeAnswers(database: Database): Promise<boolean> {
  try {
    await database.count(META_COLLECTION);
    return true;
  } catch {
    return false;
  }
}
