import type { LoopOutcome, RunContext } from './run-context.js';
import { AwaitingApproval, RunFailure } from './run-control.js';
import type { ReactState } from './checkpoint.js';
import type { ChatMessage, ToolCall } from '../models/types.js';
import { answerNothingFound, foundPassages, groundingCall, isGrounded } from './grounding.js';
import { citationsFor } from '../knowledge/citations.js';
import { finalAnswer } from './structured-output.js';

/**
 * ReAct: think → call tools → observe → … → answer, at most max_iterations model steps.
 * Each iteration starts at a breakpoint where injected messages are absorbed, and ends with a
 * checkpoint (after its events are published), so a resumed run repeats no tool call. An answer
 * ends the run only if no inject is waiting; otherwise the next iteration answers again, with it.
 * Tool calls that wait for a person's approval are checkpointed as pending, and run on resume.
 */
export async function runReact(ctx: RunContext, history: ChatMessage[], resumed?: ReactState): Promise<LoopOutcome> {
  const state: ReactState = resumed ?? { kind: 'react', iteration: 1, messages: [...history, ctx.question()] };
  const next = (): ReactState => ({ kind: 'react', iteration: state.iteration + 1, messages: state.messages });
  const runCalls = async (calls: ToolCall[]) => {
    try {
      state.messages.push(...(await ctx.callTools(state.iteration, calls)));
    } catch (err) {
      throw err instanceof AwaitingApproval ? err.withState({ ...state, pending: calls }) : err;
    }
    await ctx.checkpoint(next());
  };
  const grounded = isGrounded(ctx);
  if (grounded && !resumed && ctx.agent.knowledgeBaseIds.length > 0) {
    const calls = [groundingCall(ctx.run.query)];
    state.messages.push({ role: 'assistant', content: '', toolCalls: calls });
    state.pending = calls;
  }
  if (state.pending) {
    await runCalls(state.pending);
    state.iteration++;
  }
  for (; state.iteration <= ctx.agent.maxIterations; state.iteration++) {
    await ctx.breakpoint(state.iteration, (absorbed) => {
      state.messages.push(...absorbed);
      return state;
    });
    if (grounded && !foundPassages(state.messages)) {
      // With an output schema, "nothing found" too is asked of the model as JSON (DESIGN §23).
      const { text, output } = await finalAnswer(ctx, await answerNothingFound(ctx, state.iteration), state.messages, state.iteration);
      if (await ctx.tryFinish()) return { answer: text, output, finishReason: 'stop', citations: [] };
      state.messages.push({ role: 'assistant', content: text });
      await ctx.checkpoint(next());
      continue;
    }
    const result = await ctx.complete(state.messages, state.iteration, { grounded, structured: true });
    if (result.toolCalls.length > 0) {
      state.messages.push({ role: 'assistant', content: result.text, toolCalls: result.toolCalls });
      await runCalls(result.toolCalls);
      continue;
    }
    const { text, output } = await finalAnswer(ctx, result.text, state.messages, state.iteration);
    if (await ctx.tryFinish()) return { answer: text, output, finishReason: result.finishReason, citations: citationsFor(text, state.messages) };
    state.messages.push({ role: 'assistant', content: text });
    await ctx.checkpoint(next());
  }
  throw new RunFailure('max_iterations', `The agent did not finish within ${ctx.agent.maxIterations} iterations`);
}
