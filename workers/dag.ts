import { RunFailure, type LoopOutcome, type RunContext } from './run-context.js';
import { NODE_OUTPUT, SYNTHESIS_NODE, type ChatMessage, type PlanNode } from './models/types.js';

const NODE_STEPS = 4;

/** A DAG node: a short silent ReAct on its task; its tool calls are still published. */
async function runNode(ctx: RunContext, node: PlanNode, wave: number): Promise<string> {
  const messages: ChatMessage[] = [{ role: 'user', content: node.task }];
  for (let step = 0; step < NODE_STEPS; step++) {
    const result = await ctx.complete(messages, wave, { silent: true });
    if (result.toolCalls.length === 0) return result.text;
    messages.push({ role: 'assistant', content: result.text, toolCalls: result.toolCalls });
    messages.push(...(await ctx.callTools(wave, result.toolCalls)));
  }
  throw new RunFailure('node_failed', `Node ${node.id} did not finish within ${NODE_STEPS} steps`);
}

function validatePlan(nodes: PlanNode[]): void {
  const ids = new Set(nodes.map((n) => n.id));
  if (ids.size !== nodes.length || !ids.has(SYNTHESIS_NODE)) throw new RunFailure('invalid_plan', 'The plan has duplicate ids or no synthesis node');
  for (const node of nodes) {
    if (node.depends_on.some((d) => !ids.has(d) || d === node.id)) throw new RunFailure('invalid_plan', `Node ${node.id} depends on an unknown node`);
  }
}

/**
 * DAG: the model plans tasks with dependencies; every task whose dependencies are met runs
 * concurrently (a wave); after each wave is a breakpoint for injects; the synthesis node
 * answers, streamed as tokens.
 */
export async function runDag(ctx: RunContext, history: ChatMessage[]): Promise<LoopOutcome> {
  const query = ctx.run.query;
  const nodes = await ctx.model.plan(query, ctx.agent.model, ctx.signal);
  validatePlan(nodes);
  await ctx.publish('plan', { nodes });
  const outputs = new Map<string, string>();
  const injected: ChatMessage[] = [];
  const work = nodes.filter((n) => n.id !== SYNTHESIS_NODE);
  for (let wave = 1; outputs.size < work.length; wave++) {
    injected.push(...(await ctx.breakpoint(wave)));
    const ready = work.filter((n) => !outputs.has(n.id) && n.depends_on.every((d) => outputs.has(d)));
    if (ready.length === 0) throw new RunFailure('invalid_plan', 'The plan has a dependency cycle');
    await Promise.all(
      ready.map(async (node) => {
        await ctx.publish('node', { node_id: node.id, status: 'started' });
        try {
          const output = await runNode(ctx, node, wave);
          outputs.set(node.id, output);
          await ctx.publish('node', { node_id: node.id, status: 'succeeded', output });
        } catch (err) {
          await ctx.publish('node', { node_id: node.id, status: 'failed', output: (err as Error).message });
          throw err;
        }
      }),
    );
  }
  const synthesisWave = work.length + 1;
  for (let attempt = 0; ; attempt++) {
    injected.push(...(await ctx.breakpoint(synthesisWave + attempt)));
    await ctx.publish('node', { node_id: SYNTHESIS_NODE, status: 'started' });
    const messages: ChatMessage[] = [
      ...history,
      { role: 'user', content: query },
      ...work.map((n): ChatMessage => ({ role: 'tool', name: NODE_OUTPUT, toolCallId: n.id, content: outputs.get(n.id) ?? '' })),
      ...injected,
    ];
    const result = await ctx.complete(messages, synthesisWave + attempt, { tools: [] });
    await ctx.publish('node', { node_id: SYNTHESIS_NODE, status: 'succeeded', output: result.text });
    if (await ctx.tryFinish()) return { answer: result.text, finishReason: result.finishReason };
    if (attempt >= ctx.agent.maxIterations) throw new RunFailure('max_iterations', 'Injected messages kept arriving past max_iterations');
  }
}
