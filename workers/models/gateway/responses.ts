import type OpenAI from 'openai';
import * as v from 'valibot';
import type { Usage } from '../../../src/shared/events.js';
import type { ChatMessage, FinishReason } from '../types.js';
import type { FormatCall, FormatResult } from './transport.js';
import { responsesTextFormat } from './output-format.js';
import { GatewayCallError } from '../../../src/shared/gateway-policy.js';
import { gatewayTranscript, parseChunk, StreamedCalls, usage, userParts, optionalText as text, optionalCount as tokens, type ImageSlots } from './transcript.js';

/** The responses format: POST /v1/responses with `input`, `tools` and `reasoning.effort` (the SDK's types; sent and read by the transport's `openAiStream`). */

const ErrorBody = v.optional(v.nullable(v.looseObject({ code: text, message: text })));
const ResponseEvent = v.looseObject({
  type: v.string(),
  delta: text,
  output_index: v.optional(v.number()),
  item: v.optional(v.looseObject({ type: v.string(), call_id: text, name: text, arguments: text })),
  code: text,
  message: text,
  response: v.optional(
    v.looseObject({
      status: text,
      incomplete_details: v.optional(v.nullable(v.looseObject({ reason: text }))),
      error: ErrorBody,
      usage: v.optional(
        v.nullable(
          v.looseObject({
            input_tokens: tokens,
            output_tokens: tokens,
            total_tokens: tokens,
            output_tokens_details: v.optional(v.nullable(v.looseObject({ reasoning_tokens: tokens }))),
          }),
        ),
      ),
    }),
  ),
});
type ResponseEvent = v.InferOutput<typeof ResponseEvent>;

const INCOMPLETE: Record<string, FinishReason> = { max_output_tokens: 'length', content_filter: 'content_filter' };

function responseInput(messages: ChatMessage[], slots: ImageSlots): OpenAI.Responses.ResponseInputItem[] {
  return gatewayTranscript(messages).flatMap((m): OpenAI.Responses.ResponseInputItem[] => {
    if (m.role === 'tool') return [{ type: 'function_call_output', call_id: m.toolCallId, output: m.content }];
    if (m.role === 'user' && m.images?.length) {
      const { text, images } = userParts(m, slots.inlined);
      // DESIGN §15's part exactly: the SDK's type also wants `detail`, which gateways default to auto.
      const parts = images.map((image) => ({ type: 'input_image', image_url: slots.dataUrl(image) }) as OpenAI.Responses.ResponseInputImage);
      return [{ role: 'user', content: [{ type: 'input_text', text }, ...parts] }];
    }
    if (m.role === 'assistant' && m.toolCalls?.length) {
      const calls = m.toolCalls.map((c) => ({ type: 'function_call' as const, call_id: c.id, name: c.name, arguments: JSON.stringify(c.arguments) }));
      return m.content ? [{ role: 'assistant', content: m.content }, ...calls] : calls;
    }
    return [{ role: m.role, content: m.content }];
  });
}

/** Where a response stands as its events arrive. */
class ResponseState {
  answer = '';
  finish: FinishReason | undefined;
  used: Usage | undefined;
  readonly calls = new StreamedCalls();

  end(event: ResponseEvent): void {
    const response = event.response;
    if (response?.error?.message || event.type === 'response.failed') {
      throw new GatewayCallError('http', response?.error?.message ?? 'the response failed', { code: response?.error?.code ?? undefined });
    }
    const u = response?.usage;
    if (u) this.used = usage(u.input_tokens, u.output_tokens, u.output_tokens_details?.reasoning_tokens, u.total_tokens);
    this.finish = response?.status === 'incomplete' ? (INCOMPLETE[response.incomplete_details?.reason ?? ''] ?? 'length') : 'stop';
  }

  call(event: ResponseEvent): void {
    const index = event.output_index ?? 0;
    if (event.item?.type === 'function_call') {
      const entry = this.calls.entry(index);
      entry.id = event.item.call_id ?? entry.id;
      entry.name = event.item.name ?? entry.name;
      // The item that closes the call carries the whole arguments text.
      if (event.type === 'response.output_item.done' && event.item.arguments != null) entry.args = event.item.arguments;
    } else if (event.type === 'response.function_call_arguments.delta') {
      this.calls.entry(index).args += event.delta ?? '';
    }
  }
}

export async function streamResponses(call: FormatCall): Promise<FormatResult> {
  const { model, request, sink } = call;
  const { settings } = request;
  const functions = request.tools.map((t) => ({ type: 'function' as const, name: t.name, description: t.description, parameters: t.parameters, strict: false }));
  const tools = [...functions, ...settings.gatewayTools] as OpenAI.Responses.Tool[];
  const body = {
    model,
    input: responseInput(request.messages, call.images),
    stream: true as const,
    ...(tools.length > 0 ? { tools } : {}),
    ...(settings.reasoningEffort ? { reasoning: { effort: settings.reasoningEffort } } : {}),
    ...(settings.maxTokens ? { max_output_tokens: settings.maxTokens } : {}),
    ...(settings.outputFormat ? { text: responsesTextFormat(settings.outputFormat) } : {}),
    // The Responses API takes no stop, seed or penalties.
    ...(settings.sampling ? { temperature: settings.sampling.temperature, top_p: settings.sampling.top_p } : {}),
  };
  const stream = call.transport.openAiStream('/responses', body, call.images, request.signal);
  const state = new ResponseState();
  for await (const raw of stream) {
    const event = parseChunk(ResponseEvent, raw, 'responses');
    switch (event.type) {
      case 'response.output_text.delta':
        state.answer += event.delta ?? '';
        if (event.delta) await sink.token(event.delta);
        break;
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        if (event.delta) await sink.thought(event.delta);
        break;
      case 'response.output_item.added':
      case 'response.output_item.done':
      case 'response.function_call_arguments.delta':
        state.call(event);
        break;
      case 'response.completed':
      case 'response.incomplete':
      case 'response.failed':
        state.end(event);
        break;
      case 'error':
        throw new GatewayCallError('http', event.message ?? 'the gateway sent an error event', { code: event.code ?? undefined });
    }
  }
  if (!state.finish) throw new GatewayCallError('malformed', 'the responses stream ended before the response did');
  return { text: state.answer, toolCalls: state.calls.calls(), finishReason: state.finish, usage: state.used };
}
