/** Prometheus text exposition, read back for assertions. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseMetrics(text: string): Sample[] {
  return text.split('\n').flatMap((line) => {
    const match = SAMPLE.exec(line);
    if (!match || line.startsWith('#')) return [];
    const labels = Object.fromEntries([...(match[2] ?? '').matchAll(LABEL)].map((m) => [m[1]!, m[2]!]));
    return [{ name: match[1]!, labels, value: Number(match[3]) }];
  });
}

/** The sum of the samples named `name` whose labels include `labels` (0 when there is none). */
export function total(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value))
    .reduce((sum, s) => sum + s.value, 0);
}

export const has = (samples: Sample[], name: string) => samples.some((s) => s.name === name);
