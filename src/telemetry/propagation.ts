import { context, isSpanContextValid, propagation, ROOT_CONTEXT, trace, TraceFlags, type Context } from '@opentelemetry/api';

/**
 * A run's trace across processes (DESIGN §18): the web request that starts a run hands its span's
 * context to the worker in the job (`traceparent`, W3C Trace Context), so the worker's spans join
 * the same trace, every attempt of the run included. Only the @opentelemetry/api is used here: with
 * no SDK started (tracing off) there is no active span, and these cost a lookup that finds none.
 */

/** The instrumentation scope of the platform's own spans. */
export const TRACER_NAME = 'agent-platform';

/** A W3C `traceparent` as the job payload carries it (version, trace id, parent span id, flags). */
export const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

export interface RunTrace {
  /** The context the worker continues (sampled or not: the decision travels with it). */
  traceparent: string;
  /** The trace the run's spans go to; null when the trace is not sampled (no span of it is exported). */
  traceId: string | null;
}

/** The active span's trace, as a run started now carries it; undefined when there is none (tracing off). */
export function activeRunTrace(): RunTrace | undefined {
  const active = context.active();
  const span = trace.getSpanContext(active);
  if (!span || !isSpanContextValid(span)) return undefined;
  const carrier: { traceparent?: string } = {};
  propagation.inject(active, carrier);
  if (!carrier.traceparent || !TRACEPARENT.test(carrier.traceparent)) return undefined;
  return { traceparent: carrier.traceparent, traceId: (span.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED ? span.traceId : null };
}

/** The remote parent a job's `traceparent` names; the root context (a new trace) when it has none or it is malformed. */
export function contextOf(traceparent: string | undefined): Context {
  return traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent }) : ROOT_CONTEXT;
}
