import type { MemoryRecord } from '../../src/memories/records.js';
import type { ChatMessage } from '../models/types.js';
import type { RunContext } from './run-context.js';

/** How the recalled memories are introduced to the model, at the end of its system message. */
export const MEMORY_PREAMBLE = 'What you remember about the user from earlier conversations (the memories closest to this question; use those that are relevant):';

/**
 * DESIGN §25: before an agent with memory runs, the memories closest to the question are recalled
 * and a `memory` event names them. A failed recall (the embedding gateway down) is logged and the
 * run goes on without them: memory helps an answer, it never stops one.
 */
export async function recallBeforeRun(ctx: RunContext): Promise<MemoryRecord[]> {
  const memory = ctx.memory();
  if (!memory) return [];
  let recalled: MemoryRecord[] = [];
  try {
    recalled = await memory.recall(ctx.run.query);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    ctx.log.warn({ err }, 'memories could not be recalled; the run goes on without them');
  }
  const memories = recalled.map(({ id, namespace, content, score }) => ({ id, namespace, content, score: score ?? 0 }));
  await ctx.publish('memory', { ids: memories.map((m) => m.id), memories });
  return recalled;
}

/** The history with the recalled memories in its system message (formats take one), which the model reads first. */
export function withMemories(messages: ChatMessage[], recalled: MemoryRecord[]): ChatMessage[] {
  if (recalled.length === 0) return messages;
  const text = `${MEMORY_PREAMBLE}\n${recalled.map((m) => `- ${m.content.replace(/\s+/g, ' ')}`).join('\n')}`;
  const memories = recalled.map((m) => m.content);
  const [first, ...rest] = messages;
  if (first?.role === 'system') return [{ role: 'system', content: `${first.content}\n\n${text}`, memories }, ...rest];
  return [{ role: 'system', content: text, memories }, ...messages];
}
