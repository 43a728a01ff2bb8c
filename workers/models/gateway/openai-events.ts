import { StringDecoder } from 'node:string_decoder';
import { createParser } from 'eventsource-parser';
import type { Dispatcher } from 'undici';
import { GatewayCallError, retryAfterMs } from '../../../src/shared/gateway-policy.js';

/**
 * The events of a streamed OpenAI-style call (chat completions, responses), read the way the
 * official SDK reads them, without its request and stream machinery (a WHATWG Request, Headers,
 * AbortSignal and ReadableStream per call, a byte copy per chunk and per line), which took about
 * a quarter of the worker's CPU per run in its profile: each SSE event's data parsed as JSON until
 * `[DONE]`; data that carries an `error` object ends the call with it; a non-2xx answer is the
 * gateway's error, as the SDK reports it. Event names are not read (the SDK reads them only for
 * the Assistants API's `thread.*` events).
 */
export async function* openAiEvents(response: Dispatcher.ResponseData): AsyncGenerator<unknown> {
  if (response.statusCode < 200 || response.statusCode > 299) throw statusFailure(response.statusCode, await response.body.text().catch(() => ''), headersOf(response));
  // Parsed as they are yielded, not as they are framed: a chunk's events before a malformed one still reach the caller.
  const framed: string[] = [];
  let done = false;
  const parser = createParser({
    onEvent: ({ data }) => {
      if (done || data.startsWith('[DONE]')) done = true;
      else framed.push(data);
    },
  });
  const decoder = new StringDecoder('utf8');
  let finished = false;
  try {
    for await (const bytes of response.body as AsyncIterable<Buffer>) {
      parser.feed(decoder.write(bytes));
      for (let i = 0; i < framed.length; i++) yield eventOf(JSON.parse(framed[i]!), response);
      framed.length = 0;
    }
    // An event not ended by a blank line is not an event (the SDK and the SSE spec drop it).
    finished = true;
  } finally {
    // Left early (the caller stopped, or a chunk failed): the connection cannot be reused mid-answer.
    if (!finished) response.body.destroy();
  }
}

function eventOf(data: unknown, response: Dispatcher.ResponseData): unknown {
  const error = (data as { error?: unknown } | null)?.error;
  if (error) throw bodyFailure(error, undefined, headersOf(response));
  return data;
}

/** A non-2xx answer: the message of its `error` object, else its text (the SDK's wording). */
function statusFailure(status: number, text: string, headers: Headers): GatewayCallError {
  let json: { error?: unknown } | undefined;
  try {
    json = JSON.parse(text) as typeof json;
  } catch {
    // not JSON: the text is the message
  }
  if (json?.error) return bodyFailure(json.error, status, headers);
  return new GatewayCallError('http', json || !text ? `${status} status code (no body)` : `${status} ${text}`, { status, retryAfterMs: retryAfterMs(headers) });
}

function bodyFailure(error: unknown, status: number | undefined, headers: Headers): GatewayCallError {
  const { message, code } = error as { message?: unknown; code?: unknown };
  const text = typeof message === 'string' ? message : `${status ? `${status} ` : ''}${JSON.stringify(message ? message : error)}`;
  return new GatewayCallError('http', text, { status, code: typeof code === 'string' ? code : undefined, retryAfterMs: retryAfterMs(headers) });
}

function headersOf(response: Dispatcher.ResponseData): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(response.headers)) {
    for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, one);
  }
  return headers;
}
