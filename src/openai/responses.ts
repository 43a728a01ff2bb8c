import type { Run, RunStatus } from '../db/models.js';
import type { SseStream } from '../http/sse.js';
import { emptyUsage, type FinishReason, type RunEvent, type Usage } from '../shared/events.js';
import type { RunTally } from '../runs/follow.js';
import { responseUsage } from './usage.js';
import type { ClientToolCall } from '../shared/client-tools.js';
import { functionCallItem } from './client-tools.js';

/**
 * A run as an OpenAI Responses API response (DESIGN §16). The response id is the run id, so
 * `previous_response_id` names the run whose conversation continues.
 */

type ResponseStatus = 'queued' | 'in_progress' | 'completed' | 'incomplete' | 'failed' | 'cancelled';

/** What a response says, from a run as it goes (its events) or as stored (its record). */
export interface ResponseFacts {
  id: string;
  createdAt: Date;
  model: string;
  status: RunStatus;
  answer: string | null;
  finishReason: FinishReason | null;
  usage: Usage | null;
  error: { code: string; message: string } | null;
  previousResponseId?: string | null;
  /** The calls a run parked on for its client (DESIGN §23): `function_call` output items. */
  toolCalls?: ClientToolCall[] | null;
}

const STATUS: Record<RunStatus, ResponseStatus> = { queued: 'queued', running: 'in_progress', waiting: 'in_progress', requires_action: 'completed', succeeded: 'completed', failed: 'failed', cancelled: 'cancelled', interrupted: 'incomplete' };
const messageId = (responseId: string) => `msg_${responseId}`;
const outputText = (text: string) => ({ type: 'output_text' as const, text, annotations: [] as never[] });

function outputMessage(responseId: string, status: 'in_progress' | 'completed', content: ReturnType<typeof outputText>[]) {
  return { type: 'message' as const, id: messageId(responseId), status, role: 'assistant' as const, content };
}

export function responseObject(facts: ResponseFacts) {
  const truncated = facts.status === 'succeeded' && facts.finishReason && facts.finishReason !== 'stop';
  return {
    id: facts.id,
    object: 'response' as const,
    created_at: Math.floor(facts.createdAt.getTime() / 1000),
    status: truncated ? 'incomplete' : STATUS[facts.status],
    model: facts.model,
    output: [
      ...(facts.answer !== null && facts.status === 'succeeded' ? [outputMessage(facts.id, 'completed', [outputText(facts.answer)])] : []),
      ...(facts.status === 'requires_action' ? (facts.toolCalls ?? []).map((call) => functionCallItem(call, 'completed')) : []),
    ],
    output_text: facts.status === 'succeeded' ? (facts.answer ?? '') : '',
    error: facts.error,
    incomplete_details: truncated ? { reason: facts.finishReason === 'length' ? 'max_output_tokens' : 'content_filter' } : null,
    previous_response_id: facts.previousResponseId ?? null,
    usage: facts.usage ? responseUsage(facts.usage) : null,
    instructions: null,
    metadata: {},
    parallel_tool_calls: false,
    tool_choice: 'none' as const,
    tools: [] as never[],
    temperature: null,
    top_p: null,
    text: { format: { type: 'text' as const } },
  };
}

/** A stored run as a response (GET /v1/responses/{id}). */
export const responseOfRun = (run: Run, model: string) =>
  responseObject({
    id: run.id,
    createdAt: run.created_at,
    model,
    status: run.status,
    answer: run.answer,
    finishReason: run.finish_reason,
    usage: run.usage ? { ...emptyUsage(), ...run.usage } : null,
    error: run.error,
    toolCalls: run.required_action?.tool_calls,
  });

/** A run followed live, as a response (the non-streaming answer, and the streams' envelopes). */
export const responseOfTally = (run: Run, model: string, tally: RunTally, previousResponseId: string | null) =>
  responseObject({
    id: run.id,
    createdAt: run.created_at,
    model,
    status: tally.status ?? (tally.parked ? 'requires_action' : 'running'),
    answer: tally.status ? tally.answer : null,
    finishReason: tally.status ? tally.finishReason : null,
    usage: tally.status || tally.parked ? tally.usage : null,
    error: tally.status && tally.status !== 'succeeded' ? { code: tally.error?.code ?? tally.status, message: tally.error?.message ?? `The run ${tally.status === 'cancelled' ? 'was cancelled' : 'failed'}` } : null,
    previousResponseId,
    toolCalls: tally.parked?.toolCalls,
  });

/**
 * Writes a run's events as the Responses API's stream: `response.created`, `response.in_progress`,
 * the output item and its text part opened at the first text, one `response.output_text.delta` per
 * token, the closing events, then `response.completed` (or `response.failed`).
 */
export class ResponseStream {
  private sequence = 0;
  private opened = false;

  constructor(
    private readonly sse: SseStream,
    private readonly run: Run,
    private readonly model: string,
    private readonly previousResponseId: string | null,
    tally: RunTally,
    /** DESIGN §23: only the validated answer is sent (a repaired answer's first tokens were not valid JSON). */
    private readonly structured = false,
  ) {
    const response = this.snapshot(tally);
    this.send('response.created', { response });
    this.send('response.in_progress', { response });
  }

  observe(event: RunEvent, tally: RunTally): void {
    if (event.type === 'token' && !this.structured) this.delta(event.data.text);
    else if (event.type === 'answer' && !this.opened) this.delta(event.data.content);
    else if (event.type === 'client_tool_calls') this.functionCalls(event.data.tool_calls);
    else if (event.type === 'done') this.end(tally);
  }

  parked(tally: RunTally): void {
    this.send('response.completed', { response: this.snapshot(tally) });
  }

  /** A parking's calls (DESIGN §23), each an output item after the text, if any, streamed as OpenAI streams them. */
  private functionCalls(calls: ClientToolCall[]): void {
    calls.forEach((call, index) => {
      const outputIndex = (this.opened ? 1 : 0) + index;
      const item = functionCallItem(call, 'completed');
      this.send('response.output_item.added', { output_index: outputIndex, item: functionCallItem(call, 'in_progress') });
      this.send('response.function_call_arguments.delta', { item_id: item.id, output_index: outputIndex, delta: item.arguments });
      this.send('response.function_call_arguments.done', { item_id: item.id, output_index: outputIndex, name: item.name, arguments: item.arguments });
      this.send('response.output_item.done', { output_index: outputIndex, item });
    });
  }

  private delta(text: string): void {
    const item = outputMessage(this.run.id, 'in_progress', []);
    if (!this.opened) {
      this.opened = true;
      this.send('response.output_item.added', { output_index: 0, item });
      this.send('response.content_part.added', { item_id: item.id, output_index: 0, content_index: 0, part: outputText('') });
    }
    this.send('response.output_text.delta', { item_id: item.id, output_index: 0, content_index: 0, delta: text, logprobs: [] });
  }

  private end(tally: RunTally): void {
    if (tally.status !== 'succeeded') {
      this.send('response.failed', { response: this.snapshot(tally) });
      return;
    }
    if (!this.opened) this.delta('');
    const part = outputText(tally.answer);
    const itemId = messageId(this.run.id);
    this.send('response.output_text.done', { item_id: itemId, output_index: 0, content_index: 0, text: tally.answer, logprobs: [] });
    this.send('response.content_part.done', { item_id: itemId, output_index: 0, content_index: 0, part });
    this.send('response.output_item.done', { output_index: 0, item: outputMessage(this.run.id, 'completed', [part]) });
    this.send('response.completed', { response: this.snapshot(tally) });
  }

  private snapshot(tally: RunTally) {
    return responseOfTally(this.run, this.model, tally, this.previousResponseId);
  }

  private send(type: string, data: Record<string, unknown>): void {
    this.sse.sendFrame(JSON.stringify({ type, sequence_number: this.sequence++, ...data }), type);
  }
}
