import type { FinalRunStatus } from '../shared/run-statuses.js';
import type { RunEvent, StoredEvent, Usage, FinishReason } from '../shared/events.js';
import type { ClientToolCall } from '../shared/client-tools.js';
import { emptyUsage } from '../shared/events.js';
import type { RunRef } from '../engine/types.js';
import type { EventRelay } from './relay.js';

/** The event a follower stops at: the run's end, or its parking for its client's tool outputs (DESIGN §23). */
const stopsFollowing = (event: RunEvent) => event.type === 'done' || (event.type === 'status' && event.data.status === 'requires_action');

/**
 * A run's events after `afterId` (from its start by default), in order, until `done` or `status:
 * requires_action` (included), for the interfaces that speak another protocol than the run's own
 * SSE (the OpenAI-compatible endpoints, MCP). Ends early, without an error, when `signal` aborts
 * (the client left). The relay holds no Redis connection per follower.
 */
export async function* followRun(relay: EventRelay, run: RunRef, signal?: AbortSignal, afterId = '0-0'): AsyncGenerator<RunEvent> {
  const pending: StoredEvent[] = [];
  let wake: (() => void) | undefined;
  const ring = () => {
    wake?.();
    wake = undefined;
  };
  signal?.addEventListener('abort', ring, { once: true });
  const stop = await relay.listen(run, afterId, (events) => {
    pending.push(...events);
    ring();
  });
  try {
    while (!signal?.aborted) {
      const batch = pending.splice(0);
      for (const stored of batch) {
        // Written by the workers through the validated union (src/shared/events.ts): parsed, not re-validated.
        const event = { type: stored.type, data: JSON.parse(stored.data) } as RunEvent;
        yield event;
        if (stopsFollowing(event)) return;
      }
      if (pending.length === 0 && !signal?.aborted) await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    signal?.removeEventListener('abort', ring);
    stop();
  }
}

export type RunEnding = FinalRunStatus;

/** What a run has done so far, and how it ended: read from its events as they pass. */
export class RunTally {
  iterations = 0;
  toolCalls = 0;
  tokens = 0;
  answer = '';
  finishReason: FinishReason = 'stop';
  usage: Usage = emptyUsage();
  status: RunEnding | undefined;
  error: { code: string; message: string; retryable: boolean } | undefined;
  /** The calls the run parked on for its client (DESIGN §23), with the text its model wrote before them; set at `status: requires_action`. */
  parked: { toolCalls: ClientToolCall[]; text: string } | undefined;
  private asked: { toolCalls: ClientToolCall[]; text: string } | undefined;
  private textOf = { iteration: -1, text: '' };

  observe(event: RunEvent): void {
    switch (event.type) {
      case 'token':
        this.tokens += 1;
        this.iterations = Math.max(this.iterations, event.data.iteration);
        if (event.data.iteration !== this.textOf.iteration) this.textOf = { iteration: event.data.iteration, text: '' };
        this.textOf.text += event.data.text;
        break;
      case 'status':
        if (event.data.status === 'requires_action') this.parked = this.asked;
        break;
      case 'client_tool_calls':
        this.asked = { toolCalls: event.data.tool_calls, text: this.textOf.iteration === event.data.iteration ? this.textOf.text : '' };
        break;
      case 'thought':
        this.iterations = Math.max(this.iterations, event.data.iteration);
        break;
      case 'tool_call':
        this.toolCalls += 1;
        break;
      case 'answer':
        this.answer = event.data.content;
        this.finishReason = event.data.finish_reason;
        break;
      case 'error':
        this.error = event.data;
        break;
      case 'done':
        this.status = event.data.status;
        this.usage = event.data.usage;
        break;
      default:
        break;
    }
  }
}

/** `status: requires_action`: the run waits for its client's tool outputs (DESIGN §23). */
export const isClientPark = (event: { type: string; data: string }) => event.type === 'status' && (JSON.parse(event.data) as { status?: string }).status === 'requires_action';

/**
 * The id of the event a parked run's latest parking published (`status: requires_action`), for a
 * follower of its resumption to start after. The run is parked, so that event is its last one; the row
 * is parked before the event is published (DESIGN §21), so a caller that found the row may be early:
 * it then waits for the event, reading only what comes after the last event. Ends with the run's
 * `done` id when the run ended instead, and undefined when `signal` aborts.
 */
export async function parkEventId(relay: EventRelay, run: RunRef, signal?: AbortSignal): Promise<string | undefined> {
  const last = await relay.lastEvent(run);
  if (last && (last.type === 'done' || isClientPark(last))) return last.id;
  let settle: (id: string | undefined) => void = () => {};
  const found = new Promise<string | undefined>((resolve) => (settle = resolve));
  const onAbort = () => settle(undefined);
  signal?.addEventListener('abort', onAbort, { once: true });
  const stop = await relay.listen(run, last?.id ?? '0-0', (events) => {
    const end = events.find((stored) => stored.type === 'done' || isClientPark(stored));
    if (end) settle(end.id);
  });
  try {
    return await found;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    stop();
  }
}
