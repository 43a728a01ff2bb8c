import { tokenizer } from '../../src/shared/context-window.js';
import type { Usage } from '../../src/shared/events.js';
import type { ChatMessage, ToolCall } from './types.js';

/**
 * DESIGN §21's estimate of a model call's usage, for a call whose provider reported none (a server
 * that streams no usage, a call cut off before the usage came): the prompt and the completion
 * counted with the tokenizer of §20, marked `estimated`.
 */

/** Tool calls as the tokenizer counts them: each one's name and arguments. */
const callsText = (calls: ToolCall[]) => calls.map((c) => `${c.name} ${JSON.stringify(c.arguments)}`);

/** A prompt as the tokenizer counts it: its messages' text (and the tool calls in its history), one after another. */
export const promptText = (messages: ChatMessage[]) => messages.flatMap((m) => [m.content, ...(m.role === 'assistant' && m.toolCalls ? callsText(m.toolCalls) : [])]).join('\n');

/** What a model produced, as the tokenizer counts it: its text and the tool calls it asked for. */
export const completionText = (text: string, calls: ToolCall[]) => [text, ...callsText(calls)].join('\n');

export async function estimatedUsage(prompt: string, completion: string): Promise<Usage> {
  const counter = await tokenizer();
  const prompt_tokens = counter.count(prompt);
  const completion_tokens = counter.count(completion);
  return { prompt_tokens, completion_tokens, reasoning_tokens: 0, total_tokens: prompt_tokens + completion_tokens, estimated: true };
}
