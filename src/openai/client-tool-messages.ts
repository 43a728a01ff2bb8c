import * as v from 'valibot';
import { CALL_ID_MAX, CLIENT_TOOLS_MAX, TOOL_OUTPUT_MAX_BYTES, type ToolOutput } from '../shared/client-tools.js';
import { BadRequestError } from '../shared/errors.js';
import { renderedCall, renderedResult } from './client-tools.js';

/**
 * The tool calls and results in a client's history (DESIGN §23): the fields OpenAI's messages and
 * input items carry for them, the outputs that may resume a parked run (the results a request ends
 * with), and how they read as turns of a new run when no parked run takes them.
 */

const MAX_ARGUMENTS_CHARS = 100_000;
const text = (max: number) => v.pipe(v.string(), v.maxLength(max));
const callId = v.pipe(v.string(), v.minLength(1), v.maxLength(CALL_ID_MAX));
/** An output is at most TOOL_OUTPUT_MAX_BYTES of UTF-8; a character is at least one byte. */
const output = text(TOOL_OUTPUT_MAX_BYTES);

const ChatToolCall = v.object({
  id: callId,
  type: v.optional(v.literal('function')),
  function: v.object({ name: text(64), arguments: text(MAX_ARGUMENTS_CHARS) }),
});

/** The fields of a chat message that carry tool calls (assistant) and a tool's result (tool). */
export const chatToolMessageEntries = {
  tool_calls: v.optional(v.nullable(v.pipe(v.array(ChatToolCall), v.maxLength(CLIENT_TOOLS_MAX)))),
  tool_call_id: v.optional(callId),
};

/** The fields of a Responses input item of type function_call or function_call_output. */
export const responseToolItemEntries = {
  call_id: v.optional(callId),
  name: v.optional(text(64)),
  arguments: v.optional(text(MAX_ARGUMENTS_CHARS)),
  output: v.optional(output),
};

interface ChatMessageLike {
  role: string;
  content?: string | ({ type: string; text?: string }[]) | null;
  tool_calls?: v.InferOutput<typeof ChatToolCall>[] | null;
  tool_call_id?: string;
}

interface ResponseItemLike {
  type?: string;
  call_id?: string;
  name?: string;
  arguments?: string;
  output?: string;
}

/** A tool call or result as a turn of a new run's history; `toolResult` turns at the end become its question. */
export interface ToolTurn {
  role: 'user' | 'assistant';
  text: string;
  toolResult?: boolean;
}

const contentText = (content: ChatMessageLike['content']) =>
  typeof content === 'string' ? content : (content ?? []).flatMap((part) => (part.type === 'text' && part.text ? [part.text] : [])).join('\n');

function calledName(messages: ChatMessageLike[], before: number, id: string): string | undefined {
  for (let i = before - 1; i >= 0; i--) {
    const call = messages[i]!.tool_calls?.find((c) => c.id === id);
    if (call) return call.function.name;
  }
  return undefined;
}

/** messages[index] as a turn when it is about tools (an assistant's calls, a tool's result); undefined otherwise. */
export function chatToolTurn(messages: ChatMessageLike[], index: number): ToolTurn | undefined {
  const message = messages[index]!;
  if (message.role === 'function') throw new BadRequestError('unsupported_parameter', '"function" messages (deprecated by OpenAI) are not supported: send "tool" messages with tool_call_id', `messages[${index}].role`);
  if (message.role === 'tool') {
    if (!message.tool_call_id) throw new BadRequestError('invalid_request', 'a tool message needs the tool_call_id of the call it answers', `messages[${index}].tool_call_id`);
    const name = calledName(messages, index, message.tool_call_id);
    // As OpenAI: a result answers a call an earlier assistant message made.
    if (!name) throw new BadRequestError('invalid_request', `the tool message answers "${message.tool_call_id}", which no earlier assistant message's tool_calls made`, `messages[${index}].tool_call_id`);
    return { role: 'user', text: renderedResult(name, contentText(message.content)), toolResult: true };
  }
  if (message.role !== 'assistant' || !message.tool_calls?.length) return undefined;
  const calls = message.tool_calls.map((call) => renderedCall(call.function.name, call.function.arguments));
  return { role: 'assistant', text: [contentText(message.content), ...calls].filter(Boolean).join('\n') };
}

/**
 * The tool results the messages end with, when they answer the assistant message right before
 * them (its tool_calls): what may resume the run parked on those calls. Null otherwise.
 */
export function chatToolOutputs(messages: ChatMessageLike[]): ToolOutput[] | null {
  let first = messages.length;
  while (first > 0 && messages[first - 1]!.role === 'tool') first -= 1;
  const asked = messages[first - 1];
  if (first === messages.length || asked?.role !== 'assistant' || !asked.tool_calls?.length) return null;
  return messages.slice(first).map((m, offset) => {
    if (!m.tool_call_id) throw new BadRequestError('invalid_request', 'a tool message needs the tool_call_id of the call it answers', `messages[${first + offset}].tool_call_id`);
    return { call_id: m.tool_call_id, output: contentText(m.content) };
  });
}

/** input[index] as a turn when it is a function call or its output; undefined otherwise. */
export function responseToolTurn(input: ResponseItemLike[], index: number): ToolTurn | undefined {
  const item = input[index]!;
  if (item.type === 'function_call') {
    if (!item.name || !item.call_id) throw new BadRequestError('invalid_request', 'a function_call item needs call_id and name', `input[${index}]`);
    return { role: 'assistant', text: renderedCall(item.name, item.arguments ?? '{}') };
  }
  if (item.type !== 'function_call_output') return undefined;
  if (!item.call_id || item.output === undefined) throw new BadRequestError('invalid_request', 'a function_call_output item needs call_id and output', `input[${index}]`);
  const name = input.slice(0, index).find((i) => i.type === 'function_call' && i.call_id === item.call_id)?.name;
  // As OpenAI: without previous_response_id, an output answers a function_call item sent before it.
  if (!name) throw new BadRequestError('invalid_request', `no function_call item with call_id "${item.call_id}" comes before this output (to answer a response's calls, send previous_response_id)`, `input[${index}]`);
  return { role: 'user', text: renderedResult(name, item.output), toolResult: true };
}

/**
 * The function_call_output items of a Responses input that continues `previous_response_id`: what
 * answers that response's calls (null when there are none). Messages beside them are refused: the
 * run resumes from where it parked and has no place for a new question.
 */
export function responseToolOutputs(input: ResponseItemLike[] | string, previousResponseId: string | null | undefined): ToolOutput[] | null {
  if (typeof input === 'string' || !previousResponseId || !input.some((item) => item.type === 'function_call_output')) return null;
  return input.flatMap((item, index) => {
    if (item.type === 'function_call' || item.type === 'reasoning' || item.type === 'item_reference') return [];
    if (item.type !== 'function_call_output') throw new BadRequestError('invalid_request', 'an input that answers function calls carries only function_call_output items (and the function_call items they answer)', `input[${index}]`);
    if (item.type !== 'function_call_output') return [];
    if (!item.call_id || item.output === undefined) throw new BadRequestError('invalid_request', 'a function_call_output item needs call_id and output', `input[${index}]`);
    return [{ call_id: item.call_id, output: item.output }];
  });
}
