import { inject, injectable } from 'inversify';
import { DomainError } from '../errors';
import { Clock } from '../../ports/clock';
import { Database, type Migration, WriteConflictError } from '../../ports/database';
import { IdGenerator } from '../../ports/id-generator';
import { isFinished, type RunRecord } from '../runs/run-record';
import { RunRepository } from '../runs/run-repository';
import { type AccountRecord, Repository } from '../storage/repository';
import type { CreateGoldLabelInput, GoldLabel, UpdateGoldLabelInput } from './gold-label-schemas';

const COLLECTION = 'gold_labels';

export const goldLabelMigrations: Migration[] = [
  {
    id: 'gold-labels/001-create',
    steps: [{ createCollection: COLLECTION, fields: { account_id: 'text', run_id: 'text', created_at: 'text', revision: 'integer' } }],
  },
];

/** `revision` counts changes, so an update that raced another one is detected and redone. */
interface GoldLabelRecord extends GoldLabel, AccountRecord {
  revision: number;
}

const MAX_UPDATE_ATTEMPTS = 4;

/** Gold labels: the expected outputs of a run (docs/api.md#gold-labels), which evaluations score against. */
@injectable()
export class GoldLabelService {
  private readonly labels: Repository<GoldLabelRecord>;

  constructor(
    @inject(Database) database: Database,
    @inject(RunRepository) private readonly runs: RunRepository,
    @inject(IdGenerator) private readonly ids: IdGenerator,
    @inject(Clock) private readonly clock: Clock,
  ) {
    this.labels = new Repository(database, COLLECTION);
  }

  /** A gold label of run `runId`; `createdBy` (the client making it) is recorded as its author. */
  async create(accountId: string, runId: string, input: CreateGoldLabelInput, createdBy: string): Promise<GoldLabel> {
    const run = await this.requireRun(accountId, runId);
    const value = checkValue(input.text_value ?? null, input.object_value ?? null, input.object_value_is_partial);
    requireOutput(run, input.output_resource_name);
    const now = this.clock.now().toISOString();
    const record: GoldLabelRecord = {
      id: this.ids.newId(),
      account_id: accountId,
      run_id: run.id,
      output_resource_name: input.output_resource_name,
      ...value,
      created_by: createdBy,
      updated_by: createdBy,
      created_at: now,
      updated_at: now,
      revision: 1,
    };
    await this.labels.insert(record);
    return toGoldLabel(record);
  }

  /** The run's labels, oldest first. */
  async list(accountId: string, runId: string, page: { limit: number; offset: number }): Promise<GoldLabel[]> {
    await this.requireRun(accountId, runId);
    const records = await this.labels.find(accountId, {
      where: { run_id: runId },
      orderBy: [{ field: 'created_at' }],
      limit: page.limit,
      offset: page.offset,
    });
    return records.map(toGoldLabel);
  }

  async get(accountId: string, runId: string, id: string): Promise<GoldLabel> {
    await this.requireRun(accountId, runId);
    return toGoldLabel(await this.requireLabel(accountId, runId, id));
  }

  /** Applies the given fields; afterwards the label must still hold exactly one value. */
  async update(accountId: string, runId: string, id: string, patch: UpdateGoldLabelInput, updatedBy: string): Promise<GoldLabel> {
    const run = await this.requireRun(accountId, runId);
    if (patch.output_resource_name !== undefined) requireOutput(run, patch.output_resource_name);
    for (let attempt = 1; ; attempt += 1) {
      const current = await this.requireLabel(accountId, runId, id);
      const objectValue = patch.object_value === undefined ? current.object_value : patch.object_value;
      const value = checkValue(
        patch.text_value === undefined ? current.text_value : patch.text_value,
        objectValue,
        // An object label keeps its flag unless told otherwise; a label turning into text drops it.
        patch.object_value_is_partial ?? (objectValue === null ? undefined : current.object_value_is_partial),
      );
      const updated: GoldLabelRecord = {
        ...current,
        output_resource_name: patch.output_resource_name ?? current.output_resource_name,
        ...value,
        updated_by: updatedBy,
        updated_at: this.clock.now().toISOString(),
        revision: current.revision + 1,
      };
      try {
        await this.labels.replace(updated, { revision: current.revision });
        return toGoldLabel(updated);
      } catch (error) {
        if (!(error instanceof WriteConflictError) || attempt === MAX_UPDATE_ATTEMPTS) throw error;
      }
    }
  }

  async delete(accountId: string, runId: string, id: string): Promise<void> {
    await this.requireRun(accountId, runId);
    await this.requireLabel(accountId, runId, id);
    try {
      await this.labels.delete(accountId, id, { run_id: runId });
    } catch (error) {
      if (error instanceof WriteConflictError) throw DomainError.notFound(`gold label ${id}`);
      throw error;
    }
  }

  private requireRun(accountId: string, runId: string): Promise<RunRecord> {
    return this.runs.require(accountId, runId, `run ${runId}`);
  }

  private async requireLabel(accountId: string, runId: string, id: string): Promise<GoldLabelRecord> {
    const label = await this.labels.get(accountId, id);
    if (!label || label.run_id !== runId) throw DomainError.notFound(`gold label ${id} of run ${runId}`);
    return label;
  }
}

/**
 * A label carries exactly one value; `object_value_is_partial` only qualifies an object value
 * (it defaults to false, and is reset when the label becomes text).
 */
function checkValue(
  textValue: string | null,
  objectValue: Record<string, unknown> | null,
  objectValueIsPartial: boolean | undefined,
): Pick<GoldLabel, 'text_value' | 'object_value' | 'object_value_is_partial'> {
  if ((textValue === null) === (objectValue === null)) {
    const message =
      textValue === null
        ? 'give exactly one of text_value and object_value'
        : 'give exactly one of text_value and object_value, not both (to switch a label between text and object, set the other one to null)';
    throw DomainError.invalid(message, [{ path: 'text_value', message }]);
  }
  if (textValue !== null && objectValueIsPartial === true) {
    const message = 'object_value_is_partial applies only to an object_value';
    throw DomainError.invalid(message, [{ path: 'object_value_is_partial', message }]);
  }
  return { text_value: textValue, object_value: objectValue, object_value_is_partial: objectValue !== null && objectValueIsPartial === true };
}

/**
 * `output_resource_name` must name an output of the run (docs/api.md#gold-labels). A run that is still queued
 * or running has no outputs to name yet, so labelling it is refused with 409 (its state, retry
 * once it has finished) rather than accepting a name that may never exist; a finished run's outputs
 * are final, so a name outside them is bad input (400) and the message lists the names to use.
 */
function requireOutput(run: RunRecord, name: string): void {
  if (!isFinished(run.status)) {
    throw DomainError.conflict(`run ${run.id} is ${run.status}; gold labels can be added once it has finished and its outputs are known`);
  }
  if (run.outputs.some((output) => output.name === name)) return;
  const available = run.outputs.map((output) => output.name);
  const message =
    available.length > 0
      ? `output_resource_name '${name}' is not an output of run ${run.id}; its outputs are: ${available.join(', ')}`
      : `output_resource_name '${name}' is not an output of run ${run.id}; the run (${run.status}) has no outputs`;
  throw DomainError.invalid(message, [{ path: 'output_resource_name', message }]);
}

function toGoldLabel(record: GoldLabelRecord): GoldLabel {
  return {
    id: record.id,
    account_id: record.account_id,
    run_id: record.run_id,
    output_resource_name: record.output_resource_name,
    text_value: record.text_value,
    object_value: record.object_value,
    object_value_is_partial: record.object_value_is_partial,
    created_by: record.created_by,
    updated_by: record.updated_by,
    created_at: record.created_at,
    updated_at: record.updated_at,
  };
}
