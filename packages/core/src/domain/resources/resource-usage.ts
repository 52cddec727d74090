import { inject, injectable } from 'inversify';
import { ACTIVE_RUN_STATUSES } from '../runs/run-record';
import { RunRepository } from '../runs/run-repository';

/** Whether a resource is in use by runs; deleting it is refused (409) while it is. */
export const ResourceUsage = Symbol.for('runloom.ResourceUsage');
export interface ResourceUsage {
  isEmbeddedInActiveRun(accountId: string, resourceId: string): Promise<boolean>;
}

/** Reads the run records: a queued or running run lists the resource in its `resource_ids`. */
@injectable()
export class ActiveRunResourceUsage implements ResourceUsage {
  constructor(@inject(RunRepository) private readonly runs: RunRepository) {}

  async isEmbeddedInActiveRun(accountId: string, resourceId: string): Promise<boolean> {
    const active = await this.runs.count(accountId, { status: { in: [...ACTIVE_RUN_STATUSES] }, resource_ids: { hasAll: [resourceId] } });
    return active > 0;
  }
}
