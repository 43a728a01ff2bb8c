import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { context, diag, DiagLogLevel, propagation, trace, type DiagLogger } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import type { Logger } from '../logger.js';
import type { SamplerName, TracingConfig } from './env.js';

/**
 * The OpenTelemetry SDK of one process (DESIGN §18), started by its entry point (src/server.ts,
 * workers/main.ts) only when an OTLP endpoint is configured; everything else uses the
 * @opentelemetry/api, whose tracer is a no-op until this registers a provider. Imported
 * dynamically, so a process without tracing never even loads the SDK.
 */

export type ProcessRole = 'web' | 'worker';

export interface Tracing {
  /** Exports what is still buffered (bounded by `timeoutMs`), then stops the SDK. */
  shutdown(timeoutMs?: number): Promise<void>;
}

/** How long a shutdown waits for the last spans to leave; the process's own deadline is longer. */
const FLUSH_ON_SHUTDOWN_MS = 2000;
/** The SDK's complaints (an unreachable collector) are logged at most once per this long. */
const DIAG_LOG_INTERVAL_MS = 60_000;

function samplerOf({ name, ratio }: { name: SamplerName; ratio: number }): Sampler {
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/**
 * The OTLP/HTTP exporter with every option given explicitly from the config. (The exporter classes
 * still consult OTEL_EXPORTER_OTLP_* for options not given here: only the TLS certificate files,
 * OTEL_EXPORTER_OTLP_[TRACES_]CERTIFICATE / CLIENT_KEY / CLIENT_CERTIFICATE, reach it that way.)
 */
type ExporterOptions = NonNullable<ConstructorParameters<typeof ProtobufExporter>[0]>;

function exporterOf(config: TracingConfig): SpanExporter {
  const options: ExporterOptions = {
    url: config.url,
    headers: { ...config.headers },
    timeoutMillis: config.timeoutMs,
    compression: config.compression as ExporterOptions['compression'],
  };
  return config.protocol === 'http/json' ? new JsonExporter(options) : new ProtobufExporter(options);
}

/** The SDK's diagnostics as the process's log lines: warnings and errors only, and a dead collector at most once a minute. */
function diagnostics(logger: Logger): DiagLogger {
  let quietUntil = 0;
  let suppressed = 0;
  const report = (message: string, args: unknown[]) => {
    const now = Date.now();
    if (now < quietUntil) {
      suppressed++;
      return;
    }
    quietUntil = now + DIAG_LOG_INTERVAL_MS;
    const detail = args.map((arg) => (arg instanceof Error ? arg.message : typeof arg === 'string' ? arg : JSON.stringify(arg))).join(' ');
    logger.warn({ suppressed, detail: detail.slice(0, 1000) }, `tracing: ${message}`.slice(0, 500));
    suppressed = 0;
  };
  const ignore = () => {};
  return { error: (m, ...a) => report(m, a), warn: (m, ...a) => report(m, a), info: ignore, debug: ignore, verbose: ignore };
}

/** Registers the process's tracer provider, context manager (AsyncLocalStorage) and W3C propagator. */
export function startTracing(config: TracingConfig, role: ProcessRole, logger: Logger): Tracing {
  diag.setLogger(diagnostics(logger), { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
  const serviceName = config.serviceName ?? config.resourceAttributes['service.name'] ?? `agent-platform-${role}`;
  const resource = defaultResource().merge(
    resourceFromAttributes({
      'host.name': hostname(),
      'process.pid': process.pid,
      'service.instance.id': randomUUID(),
      ...config.resourceAttributes,
      'service.name': serviceName,
    }),
  );
  const provider = new TracerProvider({
    resource,
    sampler: samplerOf(config.sampler),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: exporterOf(config),
        scheduledDelayMillis: config.batch.scheduleDelayMs,
        exportTimeoutMillis: config.batch.exportTimeoutMs,
        maxQueueSize: config.batch.maxQueueSize,
        maxExportBatchSize: Math.min(config.batch.maxExportBatchSize, config.batch.maxQueueSize),
      }),
    ],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  logger.info({ service: serviceName, endpoint: redactedUrl(config.url), protocol: config.protocol, sampler: config.sampler.name }, 'tracing: exporting OpenTelemetry traces');
  let stopped: Promise<void> | undefined;
  return {
    shutdown(timeoutMs = FLUSH_ON_SHUTDOWN_MS) {
      stopped ??= new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          logger.warn({ ms: timeoutMs }, 'tracing: the last spans could not be exported in time');
          resolve();
        }, timeoutMs);
        timer.unref();
        provider.shutdown().then(
          () => {
            clearTimeout(timer);
            resolve();
          },
          (err: unknown) => {
            clearTimeout(timer);
            logger.warn({ err }, 'tracing: flushing the last spans failed');
            resolve();
          },
        );
      });
      return stopped;
    },
  };
}

/** The endpoint as a log line may show it: no credentials in its userinfo or query. */
function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return '(unparseable)';
  }
}
