import type { Frame } from './gateway.js';

/** Builders for what each wire format streams, so tests script replies in a line. */

export interface TestUsage {
  prompt: number;
  completion: number;
  reasoning?: number;
}

const chunk = (delta: object, finish: string | null = null) => ({
  id: 'chatcmpl-test',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'test',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

const chatUsage = (u: TestUsage) => ({
  id: 'chatcmpl-test',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'test',
  choices: [],
  usage: { prompt_tokens: u.prompt, completion_tokens: u.completion, total_tokens: u.prompt + u.completion, completion_tokens_details: { reasoning_tokens: u.reasoning ?? 0 } },
});

export const chat = {
  /** Streamed text, optionally after streamed reasoning, ending with `finish`. */
  text(pieces: string[], options: { finish?: string; usage?: TestUsage; reasoning?: string[] } = {}): Frame[] {
    return [
      chunk({ role: 'assistant', content: '' }),
      ...(options.reasoning ?? []).map((r) => chunk({ reasoning_content: r })),
      ...pieces.map((p) => chunk({ content: p })),
      chunk({}, options.finish ?? 'stop'),
      ...(options.usage ? [chatUsage(options.usage)] : []),
      { raw: '[DONE]' },
    ];
  },
  /** Several tool calls in one response, each whole in one chunk. */
  toolCalls(calls: { id: string; name: string; arguments: object }[]): Frame[] {
    return [
      chunk({ role: 'assistant', content: null, tool_calls: calls.map((c, index) => ({ index, id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } })) }),
      chunk({}, 'tool_calls'),
      { raw: '[DONE]' },
    ];
  },
  /** One tool call whose arguments arrive in `argumentPieces`, each its own chunk. */
  toolCall(id: string, name: string, argumentPieces: string[], usage?: TestUsage): Frame[] {
    return [
      chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: '' } }] }),
      ...argumentPieces.map((p) => chunk({ tool_calls: [{ index: 0, function: { arguments: p } }] })),
      chunk({}, 'tool_calls'),
      ...(usage ? [chatUsage(usage)] : []),
      { raw: '[DONE]' },
    ];
  },
};

const event = (type: string, data: object): Frame => ({ event: type, data: { type, ...data } });

const responseBody = (status: string, u?: TestUsage, reason?: string) => ({
  id: 'resp_test',
  object: 'response',
  status,
  incomplete_details: reason ? { reason } : null,
  usage: u ? { input_tokens: u.prompt, output_tokens: u.completion, total_tokens: u.prompt + u.completion, output_tokens_details: { reasoning_tokens: u.reasoning ?? 0 } } : null,
});

export const responses = {
  text(pieces: string[], options: { incomplete?: string; usage?: TestUsage; reasoning?: string[] } = {}): Frame[] {
    const status = options.incomplete ? 'incomplete' : 'completed';
    return [
      event('response.created', { response: responseBody('in_progress') }),
      ...(options.reasoning ?? []).map((delta) => event('response.reasoning_summary_text.delta', { output_index: 0, delta })),
      ...pieces.map((delta) => event('response.output_text.delta', { output_index: 1, content_index: 0, delta })),
      event(`response.${status}`, { response: responseBody(status, options.usage, options.incomplete) }),
    ];
  },
  functionCall(callId: string, name: string, argumentPieces: string[], usage?: TestUsage): Frame[] {
    const item = { type: 'function_call', id: 'fc_1', call_id: callId, name, arguments: '' };
    return [
      event('response.created', { response: responseBody('in_progress') }),
      event('response.output_item.added', { output_index: 0, item }),
      ...argumentPieces.map((delta) => event('response.function_call_arguments.delta', { output_index: 0, item_id: 'fc_1', delta })),
      event('response.output_item.done', { output_index: 0, item: { ...item, arguments: argumentPieces.join('') } }),
      event('response.completed', { response: responseBody('completed', usage) }),
    ];
  },
};

const candidate = (parts: object[], finishReason?: string) => ({ candidates: [{ content: { role: 'model', parts }, ...(finishReason ? { finishReason } : {}) }] });

export const native = {
  text(pieces: string[], options: { finish?: string; usage?: TestUsage; thoughts?: string[] } = {}): Frame[] {
    const frames: object[] = [...(options.thoughts ?? []).map((text) => candidate([{ text, thought: true }])), ...pieces.map((text) => candidate([{ text }]))];
    const u = options.usage;
    const usageMetadata = u ? { promptTokenCount: u.prompt, candidatesTokenCount: u.completion - (u.reasoning ?? 0), thoughtsTokenCount: u.reasoning ?? 0, totalTokenCount: u.prompt + u.completion } : undefined;
    frames.push({ ...candidate([], options.finish ?? 'STOP'), ...(usageMetadata ? { usageMetadata } : {}) });
    return frames;
  },
  functionCall(name: string, args: Record<string, unknown>): Frame[] {
    return [candidate([{ functionCall: { name, args } }], 'STOP')];
  },
};
