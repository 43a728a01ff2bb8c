import { createParser, type EventSourceMessage } from 'eventsource-parser';
import * as v from 'valibot';
import type { Usage } from '../../../src/shared/events.js';
import type { ChatMessage, FinishReason, ToolCall } from '../types.js';
import type { FormatCall, FormatResult } from './transport.js';
import { nativeGenerationFormat } from './output-format.js';
import type { GenerationSettings } from '../../../src/shared/model-settings.js';
import { httpFailure } from '../../../src/shared/gateway-policy.js';
import { GatewayCallError } from '../../../src/shared/gateway-policy.js';
import { gatewayTranscript, parseChunk, toolCall, usage, userParts, optionalCount as tokens, type ImageSlots } from './transcript.js';

/**
 * The native format: POST /v1beta/models/{model}:streamGenerateContent?alt=sse, key in
 * `x-goog-api-key`, `contents` of `role`/`parts`, thinking through `thinkingConfig`. No SDK
 * speaks it with these conventions, so it is fetch plus eventsource-parser.
 */

type Part = { text: string; thought?: boolean } | { inline_data: { mime_type: string; data: string } } | { functionCall: { name: string; args: Record<string, unknown> } } | { functionResponse: { name: string; response: { output: string } } };
interface Content {
  role: 'user' | 'model';
  parts: Part[];
}

const NativeChunk = v.looseObject({
  candidates: v.optional(
    v.array(
      v.looseObject({
        content: v.optional(
          v.looseObject({
            parts: v.optional(
              v.array(
                v.looseObject({
                  text: v.optional(v.string()),
                  thought: v.optional(v.boolean()),
                  functionCall: v.optional(v.looseObject({ id: v.optional(v.string()), name: v.string(), args: v.optional(v.record(v.string(), v.unknown())) })),
                }),
              ),
            ),
          }),
        ),
        finishReason: v.optional(v.string()),
      }),
    ),
  ),
  promptFeedback: v.optional(v.looseObject({ blockReason: v.optional(v.string()) })),
  usageMetadata: v.optional(v.looseObject({ promptTokenCount: tokens, candidatesTokenCount: tokens, thoughtsTokenCount: tokens, totalTokenCount: tokens })),
  error: v.optional(v.looseObject({ code: v.optional(v.unknown()), message: v.optional(v.string()) })),
});
type NativeChunk = v.InferOutput<typeof NativeChunk>;

const FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY']);
const finishOf = (reason: string): FinishReason => (reason === 'MAX_TOKENS' ? 'length' : FILTERED.has(reason) ? 'content_filter' : 'stop');

/** Gemini-style contents: the system prompt apart, tool traffic as function parts, turns of one role merged. */
function nativeContents(messages: ChatMessage[], slots: ImageSlots): { contents: Content[]; system: string } {
  const contents: Content[] = [];
  const system: string[] = [];
  const add = (role: Content['role'], parts: Part[]) => {
    const last = contents.at(-1);
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  for (const m of gatewayTranscript(messages)) {
    if (m.role === 'system') system.push(m.content);
    else if (m.role === 'user') {
      const { text, images } = userParts(m, slots.inlined);
      add('user', [{ text }, ...images.map((image) => ({ inline_data: { mime_type: image.mimeType, data: slots.base64(image) } }))]);
    }
    else if (m.role === 'tool') add('user', [{ functionResponse: { name: m.name, response: { output: m.content } } }]);
    else add('model', [...(m.content ? [{ text: m.content }] : []), ...(m.toolCalls ?? []).map((c) => ({ functionCall: { name: c.name, args: c.arguments } }))]);
  }
  return { contents, system: system.join('\n\n') };
}

const nativeSampling = (s: NonNullable<GenerationSettings['sampling']>) => ({
  temperature: s.temperature,
  topP: s.top_p,
  stopSequences: s.stop,
  seed: s.seed,
  presencePenalty: s.presence_penalty,
  frequencyPenalty: s.frequency_penalty,
});

function requestBody({ request, images }: FormatCall) {
  const { contents, system } = nativeContents(request.messages, images);
  const { maxTokens, thinkingBudget, sampling, outputFormat } = request.settings;
  return {
    contents,
    ...(system ? { systemInstruction: { parts: [{ text: system }] } } : {}),
    ...(request.tools.length > 0 ? { tools: [{ functionDeclarations: request.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })) }] } : {}),
    generationConfig: {
      ...(maxTokens ? { maxOutputTokens: maxTokens } : {}),
      ...(sampling ? nativeSampling(sampling) : {}),
      ...(outputFormat ? nativeGenerationFormat(outputFormat) : {}),
      thinkingConfig: { includeThoughts: true, ...(thinkingBudget !== undefined ? { thinkingBudget } : {}) },
    },
  };
}

class NativeState {
  answer = '';
  finish: FinishReason | undefined;
  used: Usage | undefined;
  readonly calls: ToolCall[] = [];

  async take(chunk: NativeChunk, sink: FormatCall['sink']): Promise<void> {
    if (chunk.error) {
      const code = typeof chunk.error.code === 'string' ? chunk.error.code : undefined;
      throw new GatewayCallError('http', chunk.error.message ?? 'the gateway sent an error', { code });
    }
    const m = chunk.usageMetadata;
    if (m) this.used = usage(m.promptTokenCount, (m.candidatesTokenCount ?? 0) + (m.thoughtsTokenCount ?? 0), m.thoughtsTokenCount, m.totalTokenCount);
    if (chunk.promptFeedback?.blockReason) this.finish = 'content_filter';
    const candidate = chunk.candidates?.[0];
    for (const part of candidate?.content?.parts ?? []) {
      if (part.functionCall) {
        const { id, name, args } = part.functionCall;
        this.calls.push(toolCall(id ?? `call_${this.calls.length + 1}`, name, JSON.stringify(args ?? {})));
      } else if (part.text && part.thought) {
        await sink.thought(part.text);
      } else if (part.text) {
        this.answer += part.text;
        await sink.token(part.text);
      }
    }
    if (candidate?.finishReason) this.finish = finishOf(candidate.finishReason);
  }
}

export async function streamNative(call: FormatCall): Promise<FormatResult> {
  const { transport, model, request, sink } = call;
  const { endpoint } = transport;
  const url = `${endpoint.url}/v1beta/models/${encodeURIComponent(model)}:streamGenerateContent?alt=sse`;
  const response = await transport.fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(endpoint.apiKey ? { 'x-goog-api-key': endpoint.apiKey } : {}) },
    body: call.images.body(JSON.stringify(requestBody(call))) as BodyInit,
    signal: request.signal,
  });
  if (!response.ok) throw await httpFailure(response);
  const state = new NativeState();
  const chunks: unknown[] = [];
  const parser = createParser({
    onEvent: (message: EventSourceMessage) => chunks.push(JSON.parse(message.data) as unknown),
  });
  const decoder = new TextDecoder();
  for await (const bytes of response.body as unknown as AsyncIterable<Uint8Array>) {
    parser.feed(decoder.decode(bytes, { stream: true }));
    for (const chunk of chunks.splice(0)) await state.take(parseChunk(NativeChunk, chunk, 'native'), sink);
  }
  if (!state.finish) throw new GatewayCallError('malformed', 'the native stream ended without a finishReason');
  return { text: state.answer, toolCalls: state.calls, finishReason: state.finish, usage: state.used };
}
