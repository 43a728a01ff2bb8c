import type { ChatMessage } from '../types.js';

/** Compaction on a gateway model (DESIGN §20): the summary so far and the turns after it, in one user message. */

const summarizerPrompt = (maxTokens: number | undefined) => `You keep the running summary of a conversation between a user and an assistant.
You are given the summary so far (if any) and the messages that came after it, oldest first.
Reply with the updated summary only: plain text, no preamble, written so the assistant can continue the conversation from it.
Keep every fact, name, number, decision, preference and open question that may matter later; drop pleasantries and repetition.${maxTokens ? `\nUse at most about ${Math.floor(maxTokens * 0.75)} words.` : ''}`;

const label = (m: ChatMessage) => (m.role === 'tool' ? `tool ${m.name}` : m.role);

export const summaryMessages = (previous: string | null, messages: ChatMessage[], maxTokens?: number): ChatMessage[] => [
  { role: 'system', content: summarizerPrompt(maxTokens) },
  {
    role: 'user',
    content: [
      `Summary so far:\n${previous ?? '(none)'}`,
      `Messages after it:\n${messages.map((m) => `[${label(m)}] ${m.content}`).join('\n\n')}`,
    ].join('\n\n'),
  },
];
