import { inject, injectable } from 'inversify';
import { DomainError } from '../errors';
import { Clock } from '../../ports/clock';
import { Database, type Migration, WriteConflictError } from '../../ports/database';
import { IdGenerator } from '../../ports/id-generator';
import { PatternMatcher } from '../../ports/pattern-matcher';
import { GoldLabelService } from '../gold-labels/gold-label-service';
import { isFinished, type RunRecord } from '../runs/run-record';
import { RunRepository } from '../runs/run-repository';
import { type AccountRecord, Repository } from '../storage/repository';
import { defaultMethod, scoreOutput } from './evaluation-methods';
import type { CreateEvaluationInput, Evaluation } from './evaluation-schemas';

const COLLECTION = 'evaluations';

export const evaluationMigrations: Migration[] = [
  { id: 'evaluations/001-create', steps: [{ createCollection: COLLECTION, fields: { account_id: 'text', run_id: 'text', created_at: 'text' } }] },
];

/** `comparison` is absent from evaluations stored before it was recorded. */
type EvaluationRecord = Omit<Evaluation, 'comparison'> & Partial<Pick<Evaluation, 'comparison'>> & AccountRecord;

/**
 * Evaluations (docs/api.md#evaluations): a run output scored against one of the run's gold labels, kept as the
 * score was at the time (a later change to the label does not rewrite it).
 */
@injectable()
export class EvaluationService {
  private readonly evaluations: Repository<EvaluationRecord>;

  constructor(
    @inject(Database) database: Database,
    @inject(RunRepository) private readonly runs: RunRepository,
    @inject(GoldLabelService) private readonly goldLabels: GoldLabelService,
    @inject(PatternMatcher) private readonly patterns: PatternMatcher,
    @inject(IdGenerator) private readonly ids: IdGenerator,
    @inject(Clock) private readonly clock: Clock,
  ) {
    this.evaluations = new Repository(database, COLLECTION);
  }

  /** Scores the output the label names with `method` (default: what the label's form suggests) and stores the result. */
  async create(accountId: string, runId: string, input: CreateEvaluationInput): Promise<Evaluation> {
    const run = await this.requireRun(accountId, runId);
    if (!isFinished(run.status)) throw DomainError.conflict(`run ${run.id} is ${run.status}; it can be evaluated once it has finished`);
    const label = await this.goldLabels.get(accountId, runId, input.gold_label_id);
    const method = input.method ?? defaultMethod(label);
    const output = run.outputs.find((candidate) => candidate.name === label.output_resource_name);
    const { comparison, score, passed, details } = await scoreOutput(method, label, output, this.patterns);
    const record: EvaluationRecord = {
      id: this.ids.newId(),
      account_id: accountId,
      run_id: run.id,
      gold_label_id: label.id,
      method,
      comparison,
      score,
      passed,
      details,
      created_at: this.clock.now().toISOString(),
    };
    await this.evaluations.insert(record);
    return toEvaluation(record);
  }

  /** The run's evaluations, oldest first. */
  async list(accountId: string, runId: string, page: { limit: number; offset: number }): Promise<Evaluation[]> {
    await this.requireRun(accountId, runId);
    const records = await this.evaluations.find(accountId, {
      where: { run_id: runId },
      orderBy: [{ field: 'created_at' }, { field: 'id' }],
      limit: page.limit,
      offset: page.offset,
    });
    return records.map(toEvaluation);
  }

  async get(accountId: string, runId: string, id: string): Promise<Evaluation> {
    await this.requireRun(accountId, runId);
    return toEvaluation(await this.requireEvaluation(accountId, runId, id));
  }

  async delete(accountId: string, runId: string, id: string): Promise<void> {
    await this.requireRun(accountId, runId);
    await this.requireEvaluation(accountId, runId, id);
    try {
      await this.evaluations.delete(accountId, id, { run_id: runId });
    } catch (error) {
      // Deleted meanwhile by another request.
      if (error instanceof WriteConflictError) throw DomainError.notFound(`evaluation ${id}`);
      throw error;
    }
  }

  private requireRun(accountId: string, runId: string): Promise<RunRecord> {
    return this.runs.require(accountId, runId, `run ${runId}`);
  }

  private async requireEvaluation(accountId: string, runId: string, id: string): Promise<EvaluationRecord> {
    const evaluation = await this.evaluations.get(accountId, id);
    if (!evaluation || evaluation.run_id !== runId) throw DomainError.notFound(`evaluation ${id} of run ${runId}`);
    return evaluation;
  }
}

function toEvaluation(record: EvaluationRecord): Evaluation {
  return {
    id: record.id,
    run_id: record.run_id,
    gold_label_id: record.gold_label_id,
    method: record.method,
    // Stored before `comparison` was recorded: the method named is all that is known.
    comparison: record.comparison ?? record.method,
    score: record.score,
    passed: record.passed,
    details: record.details,
    created_at: record.created_at,
  };
}
