/** A bound on the measured value itself or on its ratio to the baseline: a floor (throughput) or a ceiling (latency, overhead). */
export type BenchGoal = { of: 'value' | 'ratio' } & ({ atLeast: number } | { atMost: number });

/** One figure of `npm run bench`, printed beside its baseline measured in the same run. */
export interface BenchResult {
  name: string;
  value: number;
  /** The reference figure measured in the same run on the same machine; null when there is none. */
  baseline: number | null;
  /** value / baseline. */
  ratio: number | null;
  goal: BenchGoal | null;
  unit?: string;
}

/** A bench module: `bench/<name>.bench.ts` exporting `run`. */
export interface BenchModule {
  run(): Promise<BenchResult[]>;
}

export function benchResult(fields: Omit<BenchResult, 'ratio'>): BenchResult {
  return { ...fields, ratio: fields.baseline ? fields.value / fields.baseline : null };
}

/** Whether the goal is met; undefined when there is no goal. */
export function meetsGoal(result: BenchResult): boolean | undefined {
  if (!result.goal) return undefined;
  const measured = result.goal.of === 'ratio' ? result.ratio : result.value;
  if (measured === null) return false;
  return 'atLeast' in result.goal ? measured >= result.goal.atLeast : measured <= result.goal.atMost;
}
