import type { FinalRunStatus } from '../shared/run-statuses.js';
import type { RunEvent, StoredEvent, Usage, FinishReason } from '../shared/events.js';
import { emptyUsage } from '../shared/events.js';
import type { RunRef } from '../shared/run-lease.js';
import type { EventRelay } from './relay.js';

/**
 * A run's events from its start, in order, until `done` (included), for the interfaces that speak
 * another protocol than the run's own SSE (the OpenAI-compatible endpoints, MCP). Ends early, without
 * an error, when `signal` aborts (the client left). The relay holds no Redis connection per follower.
 */
export async function* followRun(relay: EventRelay, run: RunRef, signal?: AbortSignal): AsyncGenerator<RunEvent> {
  const pending: StoredEvent[] = [];
  let wake: (() => void) | undefined;
  const ring = () => {
    wake?.();
    wake = undefined;
  };
  signal?.addEventListener('abort', ring, { once: true });
  const stop = await relay.listen(run, '0-0', (events) => {
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
        if (event.type === 'done') return;
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

  observe(event: RunEvent): void {
    switch (event.type) {
      case 'token':
        this.tokens += 1;
        this.iterations = Math.max(this.iterations, event.data.iteration);
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
