import { createParser } from 'eventsource-parser';
import { parseEvent, type RunEvent } from '../../src/shared/events.js';

export type ReceivedEvent = RunEvent & { id: string };

export interface StreamResult {
  status: number;
  headers: Headers;
  events: ReceivedEvent[];
  /** Raw text when the response was not a stream (errors). */
  body?: any;
  comments: string[];
  /** The stream ended before `done`: aborted by the caller, or the server went away. */
  interrupted: boolean;
}

/**
 * POSTs (or GETs) and reads the SSE response to its end, validating every event against the
 * shared schemas. `onEvent` sees each event as it arrives (to inject mid-run, for instance).
 */
export async function stream(
  url: string,
  options: { method?: string; token?: string; body?: unknown; headers?: Record<string, string>; onEvent?: (event: ReceivedEvent) => void; signal?: AbortSignal },
): Promise<StreamResult> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const res = await fetch(url, {
    method: options.method ?? 'POST',
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: options.signal,
  });
  const result: StreamResult = { status: res.status, headers: res.headers, events: [], comments: [], interrupted: false };
  if (!res.headers.get('content-type')?.startsWith('text/event-stream')) {
    const text = await res.text();
    result.body = text ? JSON.parse(text) : undefined;
    return result;
  }
  const parser = createParser({
    onEvent(message) {
      const event = { ...parseEvent(message.event ?? 'message', message.data), id: message.id ?? '' } as ReceivedEvent;
      result.events.push(event);
      options.onEvent?.(event);
    },
    onComment(comment) {
      result.comments.push(comment);
    },
  });
  const decoder = new TextDecoder();
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
  } catch (err) {
    // A caller's abort, or a server killed mid-stream: what arrived so far is the result.
    if (!options.signal?.aborted && !/terminated|other side closed|ECONNRESET/i.test(String((err as Error).message) + String((err as Error).cause))) throw err;
  }
  result.interrupted = result.events.at(-1)?.type !== 'done';
  return result;
}

export const ofType = <T extends RunEvent['type']>(events: ReceivedEvent[], type: T) =>
  events.filter((e): e is Extract<ReceivedEvent, { type: T }> => e.type === type);
