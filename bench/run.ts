import fs from 'node:fs';
import path from 'node:path';
import { type BenchGoal, type BenchModule, type BenchResult, meetsGoal } from './bench-result';

/**
 * `npm run bench [-- FILTER…]`: runs every `bench/*.bench.ts` (or those whose name contains a
 * FILTER) one after another and prints one table. Figures come from this one run on this machine;
 * compare a value with its baseline, not with another machine's.
 */
async function main(filters: string[]): Promise<void> {
  const files = fs
    .readdirSync(__dirname)
    .filter((file) => file.endsWith('.bench.ts'))
    .filter((file) => filters.length === 0 || filters.some((filter) => file.includes(filter)))
    .sort();
  const results: BenchResult[] = [];
  for (const file of files) {
    process.stderr.write(`bench: ${file}\n`);
    const module = (await import(path.join(__dirname, file))) as BenchModule;
    results.push(...(await module.run()));
  }
  process.stdout.write(table(results));
  if (results.some((result) => meetsGoal(result) === false)) process.exitCode = 1;
}

function table(results: BenchResult[]): string {
  const rows = [
    ['name', 'value', 'baseline', 'ratio', 'goal', 'met'],
    ...results.map((result) => {
      const met = meetsGoal(result);
      return [
        result.name,
        `${format(result.value)}${result.unit ? ` ${result.unit}` : ''}`,
        result.baseline === null ? '-' : `${format(result.baseline)}${result.unit ? ` ${result.unit}` : ''}`,
        result.ratio === null ? '-' : result.ratio.toFixed(2),
        result.goal ? goalText(result.goal) : '-',
        met === undefined ? '-' : met ? 'yes' : 'NO',
      ];
    }),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return `${rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd()).join('\n')}\n`;
}

function goalText(goal: BenchGoal): string {
  return 'atLeast' in goal ? `${goal.of} ≥ ${format(goal.atLeast)}` : `${goal.of} ≤ ${format(goal.atMost)}`;
}

function format(value: number): string {
  return value >= 100 ? Math.round(value).toLocaleString('en-US') : value.toFixed(2);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
