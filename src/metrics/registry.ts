import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { TOOL_NAMES } from '../shared/tools.js';
import { SEPARATOR } from '../connectors/tool-names.js';
import type { QueueCounts } from '../admin/queues.js';

/** DESIGN §12: every series this platform exports starts with this. */
export const METRIC_PREFIX = 'agent_platform_';

/** Seconds; a run's model calls and runs take from milliseconds (local model) to minutes (reasoning models). */
const LONG_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900];
const SHORT_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed', 'completed', 'paused'] as const;

/** Where the gauges read their values at scrape time (a process supplies the ones it has). */
export interface MetricSources {
  openStreams?: () => number;
  /** Job counts per queue, cached (QueueStats) so a scrape costs Redis at most one round per interval. */
  queueCounts?: () => Promise<QueueCounts[]>;
}

/** Connector tools are as many as users register: one label value for all of them keeps the series bounded. */
export function toolLabel(name: string): string {
  if ((TOOL_NAMES as readonly string[]).includes(name)) return name;
  return name.includes(SEPARATOR) ? 'connector' : 'unknown';
}

/**
 * One process's Prometheus registry and series (DESIGN §12). Built by each entry point (and each
 * test) and passed to what observes it: no global registry, so processes and tests never share counts.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly httpDuration: Histogram<'route' | 'method' | 'status'>;
  readonly runsStarted: Counter<'mode'>;
  readonly runsFinished: Counter<'mode' | 'status'>;
  readonly runDuration: Histogram<'mode' | 'status'>;
  readonly firstToken: Histogram<'mode'>;
  readonly modelCallDuration: Histogram<'provider' | 'format' | 'outcome'>;
  readonly gatewayRetries: Counter<'reason'>;
  readonly toolCallDuration: Histogram<'tool' | 'outcome'>;
  readonly webhookDeliveries: Counter<'outcome'>;
  private readonly sources: MetricSources = {};

  constructor(readonly enabled = true) {
    const registers = [this.registry];
    const name = (suffix: string) => `${METRIC_PREFIX}${suffix}`;
    this.httpDuration = new Histogram({ name: name('http_request_duration_seconds'), help: 'HTTP requests by declared route pattern, method and status', labelNames: ['route', 'method', 'status'], buckets: SHORT_BUCKETS, registers });
    this.runsStarted = new Counter({ name: name('runs_started_total'), help: 'Runs accepted and queued, by mode', labelNames: ['mode'], registers });
    this.runsFinished = new Counter({ name: name('runs_finished_total'), help: 'Runs that reached a final status, by mode and status', labelNames: ['mode', 'status'], registers });
    this.runDuration = new Histogram({ name: name('run_duration_seconds'), help: 'Time from a run attempt starting to its final status', labelNames: ['mode', 'status'], buckets: LONG_BUCKETS, registers });
    this.firstToken = new Histogram({ name: name('first_token_seconds'), help: "Time from a run's request to the web relaying its first token", labelNames: ['mode'], buckets: SHORT_BUCKETS, registers });
    this.modelCallDuration = new Histogram({ name: name('model_call_duration_seconds'), help: 'Model calls by provider, API format and outcome', labelNames: ['provider', 'format', 'outcome'], buckets: LONG_BUCKETS, registers });
    this.gatewayRetries = new Counter({ name: name('gateway_retries_total'), help: 'Gateway calls retried, by the failure that caused the retry', labelNames: ['reason'], registers });
    this.toolCallDuration = new Histogram({ name: name('tool_call_duration_seconds'), help: 'Tool calls by tool (connector tools as one) and outcome', labelNames: ['tool', 'outcome'], buckets: SHORT_BUCKETS, registers });
    this.webhookDeliveries = new Counter({ name: name('webhook_deliveries_total'), help: 'Webhook delivery attempts by outcome', labelNames: ['outcome'], registers });
    const sources = this.sources;
    new Gauge({
      name: name('sse_streams_open'),
      help: 'Server-sent-event streams this process holds open',
      registers,
      collect() {
        if (sources.openStreams) this.set(sources.openStreams());
      },
    });
    new Gauge({
      name: name('queue_jobs'),
      help: 'BullMQ jobs by queue and state (read at most every 5 s)',
      labelNames: ['queue', 'state'],
      registers,
      async collect() {
        if (!sources.queueCounts) return;
        for (const counts of await sources.queueCounts()) {
          for (const state of QUEUE_STATES) this.set({ queue: counts.name, state }, counts[state]);
        }
      },
    });
    if (enabled) collectDefaultMetrics({ register: this.registry, prefix: METRIC_PREFIX });
  }

  /** Connects the gauges to what this process has (open streams on the web, queues on both). */
  watch(sources: MetricSources): this {
    Object.assign(this.sources, sources);
    return this;
  }

  scrape(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/**
 * Times `work` into `histogram` with an `outcome` label: what `outcomeOf` says of its result
 * (default `ok`), `cancelled` when `signal` was aborted, else `error`.
 */
export async function timeOutcome<L extends string, T>(
  histogram: Histogram<L | 'outcome'>,
  labels: Partial<Record<L, string>>,
  signal: AbortSignal,
  work: () => Promise<T>,
  outcomeOf: (result: T) => string = () => 'ok',
): Promise<T> {
  const end = histogram.startTimer(labels as Partial<Record<L | 'outcome', string>>);
  try {
    const result = await work();
    end({ outcome: outcomeOf(result) } as Partial<Record<L | 'outcome', string>>);
    return result;
  } catch (err) {
    end({ outcome: signal.aborted ? 'cancelled' : 'error' } as Partial<Record<L | 'outcome', string>>);
    throw err;
  }
}
