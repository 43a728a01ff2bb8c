import type OpenAI from 'openai';
import * as v from 'valibot';
import type { Usage } from '../../../src/shared/events.js';
import type { ChatMessage, FinishReason } from '../types.js';
import type { Tool } from '../../tools/tool.js';
import type { FormatCall, FormatResult } from './transport.js';
import { chatResponseFormat } from './output-format.js';
import { GatewayCallError } from '../../../src/shared/gateway-policy.js';
import { gatewayTranscript, parseChunk, StreamedCalls, usage, userParts, optionalText as text, optionalCount as tokens, type ImageSlots } from './transcript.js';

/** The chat format: POST /v1/chat/completions, streamed, OpenAI-style tool calling (the SDK's types; sent and read by the transport's `openAiStream`). */

const ChatChunk = v.looseObject({
  choices: v.optional(
    v.array(
      v.looseObject({
        delta: v.optional(
          v.looseObject({
            content: text,
            // Not OpenAI's own, but what reasoning models behind gateways stream their thinking in.
            reasoning_content: text,
            reasoning: text,
            tool_calls: v.optional(
              v.nullable(
                v.array(
                  v.looseObject({
                    index: v.number(),
                    id: text,
                    function: v.optional(v.looseObject({ name: text, arguments: text })),
                  }),
                ),
              ),
            ),
          }),
        ),
        finish_reason: text,
      }),
    ),
  ),
  usage: v.optional(
    v.nullable(
      v.looseObject({
        prompt_tokens: tokens,
        completion_tokens: tokens,
        total_tokens: tokens,
        completion_tokens_details: v.optional(v.nullable(v.looseObject({ reasoning_tokens: tokens }))),
      }),
    ),
  ),
});

const FINISH: Record<string, FinishReason> = { length: 'length', content_filter: 'content_filter' };

function chatMessages(messages: ChatMessage[], slots: ImageSlots): OpenAI.ChatCompletionMessageParam[] {
  return gatewayTranscript(messages).map((m): OpenAI.ChatCompletionMessageParam => {
    if (m.role === 'tool') return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
    if (m.role === 'user' && m.images?.length) {
      const { text, images } = userParts(m, slots.inlined);
      return { role: 'user', content: [{ type: 'text', text }, ...images.map((image) => ({ type: 'image_url' as const, image_url: { url: slots.dataUrl(image) } }))] };
    }
    if (m.role === 'assistant' && m.toolCalls?.length) {
      const calls = m.toolCalls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: JSON.stringify(c.arguments) } }));
      return { role: 'assistant', content: m.content || null, tool_calls: calls };
    }
    return { role: m.role, content: m.content };
  });
}

const functionTools = (tools: Tool[]): OpenAI.ChatCompletionTool[] =>
  tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } }));

export async function streamChat(call: FormatCall): Promise<FormatResult> {
  const { model, request, sink } = call;
  const { settings } = request;
  const body = {
    model,
    messages: chatMessages(request.messages, call.images),
    stream: true as const,
    stream_options: { include_usage: true },
    ...(request.tools.length + settings.gatewayTools.length > 0 ? { tools: [...functionTools(request.tools), ...settings.gatewayTools] as OpenAI.ChatCompletionTool[] } : {}),
    ...(settings.maxTokens ? { max_tokens: settings.maxTokens } : {}),
    ...(settings.outputFormat ? { response_format: chatResponseFormat(settings.outputFormat) } : {}),
    ...(settings.reasoningEffort ? { reasoning_effort: settings.reasoningEffort } : {}),
    ...settings.sampling,
  };
  const stream = call.transport.openAiStream('/chat/completions', body, call.images, request.signal);
  let answer = '';
  let finish: string | undefined;
  let used: Usage | undefined;
  const calls = new StreamedCalls();
  for await (const raw of stream) {
    const chunk = parseChunk(ChatChunk, raw, 'chat');
    if (chunk.usage) {
      const u = chunk.usage;
      used = usage(u.prompt_tokens, u.completion_tokens, u.completion_tokens_details?.reasoning_tokens, u.total_tokens);
    }
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    const thinking = choice.delta?.reasoning_content ?? choice.delta?.reasoning;
    if (thinking) await sink.thought(thinking);
    if (choice.delta?.content) {
      answer += choice.delta.content;
      await sink.token(choice.delta.content);
    }
    for (const delta of choice.delta?.tool_calls ?? []) {
      const entry = calls.entry(delta.index);
      entry.id ||= delta.id ?? '';
      entry.name += delta.function?.name ?? '';
      entry.args += delta.function?.arguments ?? '';
    }
    finish = choice.finish_reason ?? finish;
  }
  if (finish === undefined) throw new GatewayCallError('malformed', 'the chat stream ended without a finish_reason');
  return { text: answer, toolCalls: calls.calls(), finishReason: FINISH[finish] ?? 'stop', usage: used };
}
