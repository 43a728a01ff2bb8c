import type { MemoryRecord } from '../../src/memories/records.js';
import type { TokenCounter } from '../../src/shared/context-window.js';
import type { ChatMessage } from '../models/types.js';
import type { RunContext } from './run-context.js';

/** How the recalled memories are introduced to the model, at the end of its system message. */
export const MEMORY_PREAMBLE = 'What you remember about the user from earlier conversations (the memories closest to this question; use those that are relevant):';
/** The share of the model's context window kept for recalled memories: the history is compacted to leave it free. */
export const MEMORY_WINDOW_SHARE = 0.1;

/**
 * DESIGN §25: before an agent with memory runs, the memories closest to the question are recalled.
 * A failed recall (the embedding gateway down) is logged and the run goes on without them: memory
 * helps an answer, it never stops one.
 */
export async function recallBeforeRun(ctx: RunContext): Promise<MemoryRecord[]> {
  const memory = ctx.memory();
  if (!memory) return [];
  try {
    return await memory.recall(ctx.run.query);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    ctx.log.warn({ err }, 'memories could not be recalled; the run goes on without them');
    return [];
  }
}

/**
 * The recalled memories that fit in `reservedTokens` (MEMORY_WINDOW_SHARE of the model's window), closest first, joined to the history's system
 * message (formats take one), and the `memory` event naming exactly those the model is given.
 */
export async function giveMemories(ctx: RunContext, messages: ChatMessage[], recalled: MemoryRecord[], reservedTokens: number, counter: TokenCounter): Promise<ChatMessage[]> {
  const given: MemoryRecord[] = [];
  let tokens = counter.count(MEMORY_PREAMBLE);
  for (const memory of recalled) {
    // One too long for what is left is skipped; a shorter, farther one may still fit.
    const size = counter.count(memory.content) + 2;
    if (tokens + size > reservedTokens) continue;
    tokens += size;
    given.push(memory);
  }
  const memories = given.map(({ id, namespace, content, score }) => ({ id, namespace, content, score: score ?? 0 }));
  await ctx.publish('memory', { ids: memories.map((m) => m.id), memories });
  return withMemories(messages, given);
}

function withMemories(messages: ChatMessage[], given: MemoryRecord[]): ChatMessage[] {
  if (given.length === 0) return messages;
  const text = `${MEMORY_PREAMBLE}\n${given.map((m) => `- ${m.content.replace(/\s+/g, ' ')}`).join('\n')}`;
  const memories = given.map((m) => m.content);
  const [first, ...rest] = messages;
  if (first?.role === 'system') return [{ role: 'system', content: `${first.content}\n\n${text}`, memories }, ...rest];
  return [{ role: 'system', content: text, memories }, ...messages];
}
