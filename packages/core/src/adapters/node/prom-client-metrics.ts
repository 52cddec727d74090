import { Counter, type Metric, Registry } from 'prom-client';
import type { MetricLabels as Labels, Metrics } from '../../ports/metrics';

/**
 * The `Metrics` port on prom-client, in a registry of its own (not prom-client's global one, so two
 * Runloom instances in one process never share or clash), without prom-client's default process
 * metrics: `/metrics` lists Runloom's metrics in standard Prometheus text.
 */
export class PromClientMetrics implements Metrics {
  private madeRegistry: Registry | undefined;
  /** Gauges given before the registry is made (at start), registered when it is. */
  private readonly pendingGauges = new Map<string, Metric>();
  private readonly counters = new Map<string, Counter>();

  /** Made on first use (the first request's sample, or `/metrics`), so a server starts without loading prom-client. */
  private get registry(): Registry {
    if (!this.madeRegistry) {
      this.madeRegistry = new Registry();
      for (const gauge of this.pendingGauges.values()) this.madeRegistry.registerMetric(gauge);
      this.pendingGauges.clear();
    }
    return this.madeRegistry;
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  increment(name: string, help: string, labels: Labels = {}, by = 1): void {
    this.counterOf(name, help, labels).inc(labels, by);
  }

  counter(name: string, help: string, labels: Labels = {}): (by?: number) => void {
    const child = this.counterOf(name, help, labels).labels(labels);
    return (by = 1) => child.inc(by);
  }

  gauge(name: string, help: string, collect: () => Promise<Array<{ labels: Labels; value: number }>>): void {
    // A collector of its own rather than prom-client's Gauge: the label names are only known from
    // what `collect` answers, and each scrape reports exactly those samples.
    const collector = {
      name,
      help,
      type: 'gauge',
      aggregator: 'sum',
      get: async () => ({ name, help, type: 'gauge', aggregator: 'sum', values: await collect() }),
    };
    if (this.madeRegistry) {
      this.madeRegistry.registerMetric(collector as unknown as Metric);
      return;
    }
    // The registry's own check, at the same moment: a name given twice is the caller's mistake.
    if (this.pendingGauges.has(name)) throw new Error(`A metric with the name ${name} has already been registered.`);
    this.pendingGauges.set(name, collector as unknown as Metric);
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }

  private counterOf(name: string, help: string, labels: Labels): Counter {
    let counter = this.counters.get(name);
    if (!counter) {
      counter = new Counter({ name, help, labelNames: Object.keys(labels), registers: [this.registry] });
      this.counters.set(name, counter);
    }
    return counter;
  }
}
