/**
 * Prometheus metrics: counters that services increment and gauges read when scraped, rendered in
 * the text exposition format at `GET /metrics`. The default adapter is prom-client
 * (`adapters/node/prom-client-metrics.ts`).
 */
export const Metrics = Symbol.for('runloom.Metrics');

export type Labels = Record<string, string>;

export interface MetricsRegistry {
  /** Adds `by` to the counter `name` with `labels`; a counter's label names are those of its first use. */
  increment(name: string, help: string, labels?: Labels, by?: number): void;
  /** `increment` of one counter and label set, resolved once: for hot paths. */
  counter(name: string, help: string, labels?: Labels): (by?: number) => void;
  /** Registers a gauge whose values are read at each scrape. */
  gauge(name: string, help: string, collect: () => Promise<Array<{ labels: Labels; value: number }>>): void;
  /** Every metric in the Prometheus text exposition format. */
  render(): Promise<string>;
  /** The Content-Type of `render()`'s text. */
  readonly contentType: string;
}
