import type { Tool } from '../tools/tool.js';
import { REMEMBER_TOOL } from '../tools/memory-tools.js';
import type { ChatMessage, ToolCall } from './types.js';

/** The local model's memory (DESIGN §25): what it remembers when asked, and which recalled memory answers a question. */

const quote = (text: string) => `"${text.replace(/\s+/g, ' ').trim()}"`;

/** DESIGN §25: "Remember that X" → a `remember` call with X, once per turn, when the agent has memory. */
const REMEMBER_THAT = /^\s*remember that\s+([\s\S]+)$/i;

export function nextRemember(turn: ChatMessage[], tools: Tool[]): ToolCall | undefined {
  if (!tools.some((t) => t.name === REMEMBER_TOOL)) return undefined;
  if (turn.some((m) => m.role === 'assistant' && m.toolCalls?.some((c) => c.name === REMEMBER_TOOL))) return undefined;
  const question = turn.find((m) => m.role === 'user' && !m.injected)?.content;
  const content = question?.match(REMEMBER_THAT)?.[1]?.trim();
  return content ? { id: 'call_remember', name: REMEMBER_TOOL, arguments: { content } } : undefined;
}

/** The memories recalled before the run (DESIGN §25), from the system message that carries them. */
export const recalledMemories = (messages: ChatMessage[]) => messages.flatMap((m) => (m.role === 'system' ? (m.memories ?? []) : []));

/** The contents a `recall` tool result lists. */
export function recalledIn(output: string): string[] {
  try {
    const records = JSON.parse(output) as { content?: unknown }[];
    return Array.isArray(records) ? records.flatMap((r) => (typeof r?.content === 'string' ? [r.content] : [])) : [];
  } catch {
    return [];
  }
}

const FILLER = new Set(['what', 'which', 'who', 'whom', 'where', 'when', 'why', 'how', 'the', 'and', 'are', 'is', 'was', 'were', 'you', 'your', 'yours', 'my', 'mine', 'me', 'do', 'does', 'did', 'can', 'could', 'would', 'should', 'that', 'this', 'these', 'those', 'for', 'with', 'about', 'have', 'has', 'had', 'remember', 'tell', 'know', 'any', 'some', 'of', 'to', 'in', 'on', 'at', 'a', 'an', 'it', 'be', 'i']);
const contentWords = (text: string) => new Set((text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length > 1 && !FILLER.has(w)));

/** The memory sharing most words with the question (the closer one on a tie); none when none shares a word. */
export function bestMemory(turn: ChatMessage[], memories: string[]): string | undefined {
  const question = contentWords(turn.find((m) => m.role === 'user' && !m.injected)?.content ?? '');
  let best: { memory: string; shared: number } | undefined;
  for (const memory of memories) {
    let shared = 0;
    for (const word of contentWords(memory)) if (question.has(word)) shared++;
    if (shared > 0 && shared > (best?.shared ?? 0)) best = { memory, shared };
  }
  return best?.memory;
}

export const quoteMemory = (memory: string | undefined) => (memory ? `From what you told me before: ${quote(memory)}.` : 'I do not remember anything about that.');
