import type { MetricLabels as Labels, Metrics } from '../../ports/metrics';

interface MetricFamily {
  help: string;
  type: 'counter' | 'gauge';
  values: Map<string, number>;
  collect?: () => Promise<Array<{ labels: Labels; value: number }>>;
}

/** The `Metrics` port in process memory: what one instance counted since it started. */
export class MemoryMetrics implements Metrics {
  private readonly families = new Map<string, MetricFamily>();

  /** Adds `by` to the counter `name` with `labels`. */
  increment(name: string, help: string, labels: Labels = {}, by = 1): void {
    const family = this.family(name, help, 'counter');
    const key = labelKey(labels);
    family.values.set(key, (family.values.get(key) ?? 0) + by);
  }

  /** `increment` of one counter and label set, with the labels' key worked out once: for hot paths. */
  counter(name: string, help: string, labels: Labels = {}): (by?: number) => void {
    const family = this.family(name, help, 'counter');
    const key = labelKey(labels);
    return (by = 1) => {
      family.values.set(key, (family.values.get(key) ?? 0) + by);
    };
  }

  /** Registers a gauge whose values are read at each scrape. */
  gauge(name: string, help: string, collect: () => Promise<Array<{ labels: Labels; value: number }>>): void {
    this.family(name, help, 'gauge').collect = collect;
  }

  async render(): Promise<string> {
    const lines: string[] = [];
    for (const [name, family] of this.families) {
      lines.push(`# HELP ${name} ${family.help}`, `# TYPE ${name} ${family.type}`);
      const samples = family.collect
        ? (await family.collect()).map(({ labels, value }) => [labelKey(labels), value] as const)
        : [...family.values];
      for (const [key, value] of samples) lines.push(`${name}${key} ${value}`);
    }
    return `${lines.join('\n')}\n`;
  }

  private family(name: string, help: string, type: MetricFamily['type']): MetricFamily {
    let family = this.families.get(name);
    if (!family) {
      family = { help, type, values: new Map() };
      this.families.set(name, family);
    }
    return family;
  }
}

function labelKey(labels: Labels): string {
  const entries = Object.entries(labels);
  if (!entries.length) return '';
  const body = entries.map(([key, value]) => `${key}="${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`);
  return `{${body.join(',')}}`;
}
