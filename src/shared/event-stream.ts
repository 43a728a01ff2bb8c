import { createParser } from 'eventsource-parser';
import { parseEvent, type RunEvent } from './events.js';

/** One event of a run's stream with its id, the resume point for `Last-Event-ID`. */
export interface StreamedEvent {
  id: string;
  event: RunEvent;
}

/**
 * Reads a run's server-sent events from a fetch response as they arrive (the run endpoints are
 * POSTs, which EventSource cannot make), each parsed into the typed union the workers publish.
 * Resolves when the stream ends; a stream cut by `signal` resolves too. The console and agentctl read
 * runs through it.
 */
export async function readEvents(res: Response, onEvent: (streamed: StreamedEvent) => void, signal?: AbortSignal): Promise<void> {
  if (!res.body) return;
  const parser = createParser({
    onEvent: (message) => {
      if (!message.event || !message.id) return;
      onEvent({ id: message.id, event: parseEvent(message.event, message.data) });
    },
  });
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  const stop = () => void reader.cancel().catch(() => {});
  signal?.addEventListener('abort', stop, { once: true });
  try {
    for (;;) {
      const { value, done } = await reader.read().catch((err: unknown) => {
        if (signal?.aborted) return { value: undefined, done: true as const };
        throw err;
      });
      if (done) return;
      parser.feed(value);
    }
  } finally {
    signal?.removeEventListener('abort', stop);
  }
}
