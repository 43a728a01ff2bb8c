import type { LoopOutcome, RunContext } from './run-context.js';
import { RunFailure } from './run-control.js';
import type { ReactState } from './checkpoint.js';
import type { ChatMessage } from './models/types.js';

/**
 * ReAct: think → call tools → observe → … → answer, at most max_iterations model steps.
 * Each iteration starts at a breakpoint where injected messages are absorbed, and ends with a
 * checkpoint (after its events are published), so a resumed run repeats no tool call. An answer
 * ends the run only if no inject is waiting; otherwise the next iteration answers again, with it.
 */
export async function runReact(ctx: RunContext, history: ChatMessage[], resumed?: ReactState): Promise<LoopOutcome> {
  const state: ReactState = resumed ?? { kind: 'react', iteration: 1, messages: [...history, { role: 'user', content: ctx.run.query }] };
  const next = (): ReactState => ({ ...state, iteration: state.iteration + 1 });
  for (; state.iteration <= ctx.agent.maxIterations; state.iteration++) {
    await ctx.breakpoint(state.iteration, (absorbed) => {
      state.messages.push(...absorbed);
      return state;
    });
    const result = await ctx.complete(state.messages, state.iteration);
    if (result.toolCalls.length > 0) {
      state.messages.push({ role: 'assistant', content: result.text, toolCalls: result.toolCalls });
      state.messages.push(...(await ctx.callTools(state.iteration, result.toolCalls)));
      await ctx.checkpoint(next());
      continue;
    }
    if (await ctx.tryFinish()) return { answer: result.text, finishReason: result.finishReason };
    state.messages.push({ role: 'assistant', content: result.text });
    await ctx.checkpoint(next());
  }
  throw new RunFailure('max_iterations', `The agent did not finish within ${ctx.agent.maxIterations} iterations`);
}
