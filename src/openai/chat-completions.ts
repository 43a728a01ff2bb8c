import type { Run } from '../db/models.js';
import type { SseStream } from '../http/sse.js';
import type { RunEvent } from '../shared/events.js';
import type { RunTally } from '../runs/follow.js';
import { chatUsage } from './usage.js';
import { chatToolCallDeltas, chatToolCallMessage } from './client-tools.js';

/** A run as OpenAI chat completions (DESIGN §16): one `chat.completion`, or `chat.completion.chunk`s ending `[DONE]`. */

const completionId = (run: Run) => `chatcmpl-${run.id}`;
const seconds = (at: Date) => Math.floor(at.getTime() / 1000);

/** The run's answer as one `chat.completion`. */
export function chatCompletion(run: Run, model: string, tally: RunTally) {
  return {
    id: completionId(run),
    object: 'chat.completion' as const,
    created: seconds(run.created_at),
    model,
    choices: [
      tally.parked
        ? { index: 0, message: chatToolCallMessage(tally.parked), logprobs: null, finish_reason: 'tool_calls' as const }
        : { index: 0, message: { role: 'assistant' as const, content: tally.answer, refusal: null }, logprobs: null, finish_reason: tally.finishReason },
    ],
    usage: chatUsage(tally.usage),
  };
}

/** The error a stream ends with when its run ends without an answer; OpenAI SDKs raise it as an APIError. */
export function streamedRunError(tally: RunTally) {
  const cancelled = tally.status === 'cancelled';
  return {
    error: {
      message: tally.error?.message ?? (cancelled ? 'The run was cancelled' : 'The run failed'),
      type: cancelled ? 'invalid_request_error' : 'server_error',
      code: tally.error?.code ?? (cancelled ? 'cancelled' : 'run_failed'),
      param: null,
    },
  };
}

/**
 * Writes a run's events as chunks: a first one with the role (so headers and a byte leave at once),
 * one per token, the finish reason, then — when the client asked — the usage chunk with empty
 * `choices` (LibreChat and LiteLLM bill from it), and `[DONE]`. A run that ends without an answer
 * ends the stream with an `error` frame instead.
 */
export class ChatCompletionStream {
  private streamed = false;
  private readonly base: { id: string; object: 'chat.completion.chunk'; created: number; model: string };

  constructor(
    private readonly sse: SseStream,
    run: Run,
    model: string,
    private readonly includeUsage: boolean,
    /** DESIGN §23: only the validated answer is sent (a repaired answer's first tokens were not valid JSON). */
    private readonly structured = false,
  ) {
    this.base = { id: completionId(run), object: 'chat.completion.chunk', created: seconds(run.created_at), model };
    this.chunk({ role: 'assistant', content: '' }, null);
  }

  observe(event: RunEvent, tally: RunTally): void {
    if (event.type === 'token' && !this.structured) {
      this.streamed = true;
      this.chunk({ content: event.data.text }, null);
    } else if (event.type === 'answer' && !this.streamed) {
      // A model that does not stream (or a run resumed past its tokens) still gives its answer.
      this.chunk({ content: event.data.content }, null);
    } else if (event.type === 'client_tool_calls') {
      for (const delta of chatToolCallDeltas(event.data.tool_calls)) this.chunk(delta, null);
    } else if (event.type === 'done') {
      this.end(tally);
    }
  }

  parked(tally: RunTally): void {
    this.finish('tool_calls', tally);
  }

  private end(tally: RunTally): void {
    if (tally.status !== 'succeeded') {
      this.sse.sendFrame(JSON.stringify(streamedRunError(tally)));
      return;
    }
    this.finish(tally.finishReason, tally);
  }

  private finish(finishReason: string, tally: RunTally): void {
    this.chunk({}, finishReason);
    if (this.includeUsage) this.sse.sendFrame(JSON.stringify({ ...this.base, choices: [], usage: chatUsage(tally.usage) }));
    this.sse.sendFrame('[DONE]');
  }

  private chunk(delta: Record<string, unknown>, finishReason: string | null): void {
    const chunk = { ...this.base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }], ...(this.includeUsage ? { usage: null } : {}) };
    this.sse.sendFrame(JSON.stringify(chunk));
  }
}
