/**
 * Operational metrics: counters that services increment and gauges read when scraped, rendered
 * in the Prometheus text exposition format at `GET /metrics` (docs/api.md#operations).
 *
 * Guarantees every adapter keeps:
 * - a metric is named once with its help text and type; later calls with the same name add to it;
 * - `counter` answers an increment of one counter and label set whose labels are worked out once
 *   (for hot paths), equivalent to calling `increment` each time;
 * - a gauge's `collect` is called at each `render`, never cached;
 * - label values are escaped as the exposition format requires (`\\`, `"`, newline).
 */
export const Metrics = Symbol.for('runloom.Metrics');

export type MetricLabels = Record<string, string>;

export interface Metrics {
  /** Adds `by` to the counter `name` with `labels`. */
  increment(name: string, help: string, labels?: MetricLabels, by?: number): void;
  /** `increment` of one counter and label set, with the labels' key worked out once: for hot paths. */
  counter(name: string, help: string, labels?: MetricLabels): (by?: number) => void;
  /** Registers a gauge whose values are read at each scrape. */
  gauge(name: string, help: string, collect: () => Promise<Array<{ labels: MetricLabels; value: number }>>): void;
  /** Every metric in the Prometheus text exposition format. */
  render(): Promise<string>;
  /** The Content-Type of `render()`'s text. */
  readonly contentType: string;
}
