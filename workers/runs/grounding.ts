import type { RunContext } from './run-context.js';
import type { ChatMessage, ToolCall } from '../models/types.js';
import { KNOWLEDGE_TOOL, NOTHING_FOUND, retrievedInTurn } from '../knowledge/citations.js';

/**
 * doc_mode `grounded` (DESIGN §14): the run searches its agent's knowledge bases with the question
 * before the first model call, as a visible tool call, and answers only from what came back.
 */
export const groundingCall = (query: string): ToolCall => ({ id: 'call_grounding', name: KNOWLEDGE_TOOL, arguments: { query } });

export const isGrounded = (ctx: RunContext) => ctx.agent.docMode === 'grounded';

/** Whether a grounded turn has passages to answer from; without any it never calls the model. */
export const foundPassages = (messages: ChatMessage[]) => retrievedInTurn(messages).length > 0;

/** The answer of a grounded turn that found nothing: said, never invented. */
export async function answerNothingFound(ctx: RunContext, iteration: number, scope?: string): Promise<string> {
  const text = ctx.agent.knowledgeBaseIds.length === 0 ? `${NOTHING_FOUND} (This agent has no knowledge bases.)` : NOTHING_FOUND;
  await ctx.publish('token', { iteration, text }, scope);
  return text;
}
