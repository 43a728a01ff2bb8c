import { RunFailure, type LoopOutcome, type RunContext } from './run-context.js';
import type { ChatMessage } from './models/types.js';

/**
 * ReAct: think → call tools → observe → … → answer, at most max_iterations model steps.
 * Each iteration starts at a breakpoint where injected messages are absorbed. An answer ends
 * the run only if no inject is waiting; otherwise the next iteration answers again, with it.
 */
export async function runReact(ctx: RunContext, history: ChatMessage[]): Promise<LoopOutcome> {
  const messages: ChatMessage[] = [...history, { role: 'user', content: ctx.run.query }];
  for (let iteration = 1; iteration <= ctx.agent.maxIterations; iteration++) {
    messages.push(...(await ctx.breakpoint(iteration)));
    const result = await ctx.complete(messages, iteration);
    if (result.toolCalls.length > 0) {
      messages.push({ role: 'assistant', content: result.text, toolCalls: result.toolCalls });
      messages.push(...(await ctx.callTools(iteration, result.toolCalls)));
      continue;
    }
    if (await ctx.tryFinish()) return { answer: result.text, finishReason: result.finishReason };
    messages.push({ role: 'assistant', content: result.text });
  }
  throw new RunFailure('max_iterations', `The agent did not finish within ${ctx.agent.maxIterations} iterations`);
}
