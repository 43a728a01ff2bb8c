import type { Compaction, CountedMessage, HistoryMessage, LoadedRun } from '../../src/engine/worker-engine.js';
import type { Run } from '../../src/db/models.js';
import {
  budgetOf,
  fitSummary,
  MESSAGE_OVERHEAD,
  planCompaction,
  SUMMARY_PROMPT_TOKENS,
  summaryChunks,
  tokenizer,
  withSummary,
  type TokenCounter,
} from '../../src/shared/context-window.js';
import type { ChatMessage } from '../models/types.js';
import type { RunContext } from './run-context.js';
import { RunFailure } from './run-control.js';

/** The words withSummary puts before a summary, with room to spare. */
const SUMMARY_FRAME = 24;

/** A run's transcript before its question (DESIGN §20), and what it learnt about token counts on the way. */
export interface PreparedHistory {
  /** The system message (instructions, then the conversation's summary) and the unsummarised turns, oldest first. */
  messages: ChatMessage[];
  /** Counts of messages that had none: kept with the run's end (or its compaction). */
  counted: CountedMessage[];
  counter: TokenCounter;
}

/** Where a compaction is kept (WorkerEngine.compact): the new summary and the checkpoint after it, in one fenced statement. */
export interface HistoryCompactor {
  compact(run: Run, compaction: Compaction): Promise<void>;
}

const chat = (m: Pick<HistoryMessage, 'role' | 'content' | 'injected'>): ChatMessage =>
  m.role === 'user' ? { role: 'user', content: m.content, injected: m.injected } : { role: m.role, content: m.content };

/**
 * The run's history as its model will read it: the conversation's summary and the turns after it.
 * When the transcript — instructions, summary, history and question — would pass 80% of the input
 * room (context_window − max_tokens), the oldest turns are summarised first by the run's own model
 * (extending the summary, never re-reading what it covers), the new summary and a checkpoint after
 * the `compaction` event are stored in one fenced statement, and the run goes on with summary +
 * recent turns. `compact: false` (a resumed attempt that has a checkpoint): the stored summary
 * is used as it is, so a resumed run never summarises again or differently.
 */
/** `reserved`: tokens kept free for what joins the system message after (recalled memories, DESIGN §25). */
export async function prepareHistory(ctx: RunContext, loaded: LoadedRun, options: { window: number; compact: boolean; store: HistoryCompactor; reserved?: number }): Promise<PreparedHistory> {
  const counter = await tokenizer();
  const counted: CountedMessage[] = [];
  const sizes = loaded.history.map((m) => {
    let tokens = m.tokens;
    if (tokens === null || tokens === undefined) {
      tokens = counter.count(m.content);
      counted.push({ id: m.id, tokens });
    }
    return { tokens: tokens + MESSAGE_OVERHEAD, role: m.role, injected: m.injected };
  });
  const { instructions } = ctx.agent;
  const budget = budgetOf(options.window, ctx.agent.settings.maxTokens);
  const fixed = counter.count(instructions) + counter.count(ctx.run.query) + 2 * MESSAGE_OVERHEAD;
  if (fixed > budget.room) {
    throw new RunFailure('context_window_exceeded', `The question and the agent's instructions take ${fixed} tokens; the agent's context window of ${budget.window} tokens leaves ${budget.room} for them`);
  }
  // What is reserved counts as fixed, as far as there is room for it beyond the question and instructions.
  const fixedAndReserved = fixed + Math.min(options.reserved ?? 0, budget.room - fixed);
  let summary = loaded.summary.text;
  const summaryTokens = summary ? counter.count(summary) + SUMMARY_FRAME : 0;
  const plan = options.compact ? planCompaction(budget, fixedAndReserved, summaryTokens, sizes) : undefined;
  let history = loaded.history;
  if (plan?.compact) {
    const covered = history.slice(0, plan.summarize);
    const kept = sizes.slice(plan.summarize).reduce((sum, m) => sum + m.tokens, 0);
    // A question that leaves less than a full summary's room gets a shorter summary.
    const summaryMax = Math.max(1, Math.min(budget.summaryMax, budget.room - fixedAndReserved - kept - SUMMARY_FRAME));
    const limit = Math.max(64, budget.room - budget.summaryMax - SUMMARY_PROMPT_TOKENS);
    for (const [from, to] of summaryChunks(sizes.slice(0, plan.summarize).map((m) => m.tokens), limit)) {
      const messages = covered.slice(from, to).map((m, i) => chat(sizes[from + i]!.tokens > limit ? { ...m, content: counter.head(m.content, limit) } : m));
      summary = fitSummary(await ctx.summarize(summary, messages, summaryMax), summaryMax, counter);
    }
    history = history.slice(plan.summarize);
    const stats = { summarized_messages: covered.length, tokens_before: plan.total, tokens_after: fixed + counter.count(summary!) + SUMMARY_FRAME + kept };
    await ctx.publish('compaction', stats);
    await ctx.flush();
    await ctx.claimed;
    await options.store.compact(ctx.run, { summary: summary!, through: covered.at(-1)!.id, checkpoint: JSON.stringify(ctx.snapshot(undefined, true)), counted });
    counted.length = 0;
    ctx.log.info(stats, 'conversation compacted');
  } else if (summary) {
    // A question that leaves less room than the stored summary takes (no history left to summarise): this run reads its newest part.
    const kept = sizes.reduce((sum, m) => sum + m.tokens, 0);
    const room = budget.room - fixedAndReserved - kept - SUMMARY_FRAME;
    if (summaryTokens - SUMMARY_FRAME > room) summary = room > 0 ? fitSummary(summary, room, counter) : null;
  }
  const system = withSummary(instructions, summary);
  return { messages: [...(system ? [{ role: 'system' as const, content: system }] : []), ...history.map(chat)], counted, counter };
}
