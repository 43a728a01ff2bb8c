import { nodeScope, type LoopOutcome, type RunContext } from './run-context.js';
import { AwaitingApproval, RunFailure } from './run-control.js';
import type { DagState } from './checkpoint.js';
import { NODE_OUTPUT, SYNTHESIS_NODE, type ChatMessage, type PlanNode } from '../models/types.js';
import type { Citation } from '../../src/shared/events.js';
import { foundPassages, groundingCall, isGrounded } from './grounding.js';
import { citationsFor, NOTHING_FOUND } from '../knowledge/citations.js';
import { finalAnswer } from './structured-output.js';

const NODE_STEPS = 4;

interface NodeOutcome {
  output: string;
  citations: Citation[];
}

/** The passages the nodes' outputs used, each once, in plan order: the synthesis answers from those outputs. */
function nodeCitations(state: DagState): Citation[] {
  const seen = new Set<string>();
  return state.plan.flatMap((node) => state.citations?.[node.id] ?? []).filter((c) => !seen.has(c.chunk_id) && Boolean(seen.add(c.chunk_id)));
}

/**
 * A DAG node: a short silent ReAct on its task; its tool calls are still published (in the node's
 * scope). A node that parked on tool calls (`parked`) goes on from those calls.
 */
async function runNode(ctx: RunContext, node: PlanNode, state: DagState): Promise<NodeOutcome> {
  const { wave, outputs } = state;
  const scope = nodeScope(node.id);
  const grounded = isGrounded(ctx);
  const resumed = state.parked?.[node.id];
  const messages: ChatMessage[] = resumed ? [...resumed.messages] : [];
  /** The calls the last assistant message made; parked with the transcript while they wait. */
  const callTools = async (step: number) => {
    const last = messages.at(-1);
    const calls = last?.role === 'assistant' ? (last.toolCalls ?? []) : [];
    try {
      messages.push(...(await ctx.callTools(wave, calls, scope)));
    } catch (err) {
      if (err instanceof AwaitingApproval) (state.parked ??= {})[node.id] = { messages: [...messages], step };
      throw err;
    }
  };
  let step = resumed?.step ?? 0;
  if (resumed) {
    await callTools(step);
    step++;
  } else {
    const inputs = node.depends_on.map((id): ChatMessage => ({ role: 'tool', name: NODE_OUTPUT, toolCallId: id, content: outputs[id] ?? '' }));
    // A node works on the question's images as much as on its text: they come with its task.
    messages.push(ctx.question(node.task), ...inputs);
    if (grounded && ctx.agent.knowledgeBaseIds.length > 0) {
      messages.push({ role: 'assistant', content: '', toolCalls: [groundingCall(node.task)] });
      await callTools(-1);
    }
  }
  if (grounded && !foundPassages(messages)) return { output: NOTHING_FOUND, citations: [] };
  for (; step < NODE_STEPS; step++) {
    const result = await ctx.complete(messages, wave, { silent: true, scope, grounded });
    if (result.toolCalls.length === 0) return { output: result.text, citations: citationsFor(result.text, messages) };
    messages.push({ role: 'assistant', content: result.text, toolCalls: result.toolCalls });
    await callTools(step);
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

async function plan(ctx: RunContext): Promise<DagState> {
  const nodes = await ctx.plan();
  validatePlan(nodes);
  await ctx.publish('plan', { nodes });
  const state: DagState = { kind: 'dag', plan: nodes, outputs: {}, injected: [], wave: 1 };
  await ctx.checkpoint(state);
  return state;
}

/** One node of a wave; its events live in its own scope, and its output is checkpointed once published. */
async function runWaveNode(ctx: RunContext, state: DagState, node: PlanNode): Promise<void> {
  const scope = nodeScope(node.id);
  // A node back from parking announced its start already.
  if (!state.parked?.[node.id]) await ctx.publish('node', { node_id: node.id, status: 'started' }, scope);
  try {
    const { output, citations } = await ctx.inNode(node.id, () => runNode(ctx, node, state));
    await ctx.publish('node', { node_id: node.id, status: 'succeeded', output }, scope);
    state.outputs[node.id] = output;
    if (state.parked) delete state.parked[node.id];
    if (citations.length > 0) (state.citations ??= {})[node.id] = citations;
    await ctx.checkpoint(state);
  } catch (err) {
    if (err instanceof RunFailure) await ctx.publish('node', { node_id: node.id, status: 'failed', output: err.message }, scope);
    throw err;
  }
}

/**
 * Runs a wave's nodes side by side and lets every one finish (its output checkpointed) before the
 * wave's outcome: a failure, or — when nodes wait for approvals or client outputs — the run parks
 * with this state; a node that waited goes on from the calls it waited on (`parked`) on resume.
 */
async function settleWave(ctx: RunContext, state: DagState, ready: PlanNode[]): Promise<void> {
  const settled = await Promise.allSettled(ready.map((node) => runWaveNode(ctx, state, node)));
  const reasons = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason as unknown] : []));
  const failure = reasons.find((reason) => !(reason instanceof AwaitingApproval));
  if (failure !== undefined) throw failure;
  const awaiting = reasons as AwaitingApproval[];
  // Client tool calls of every node that waits on its client park the run together (DESIGN §23).
  if (awaiting.length > 0) throw new AwaitingApproval(Math.min(...awaiting.map((a) => a.deadlineMs)), state, awaiting.flatMap((a) => a.clientCalls));
}

/**
 * DAG: the model plans tasks with dependencies; every task whose dependencies are met runs
 * concurrently (a wave); after each wave is a breakpoint for injects; the synthesis node
 * answers, streamed as tokens. Each finished node is checkpointed: a resumed run re-runs only
 * the nodes that had not finished (their events, numbered per node, are not published twice).
 */
export async function runDag(ctx: RunContext, history: ChatMessage[], resumed?: DagState): Promise<LoopOutcome> {
  const state = resumed ?? (await plan(ctx));
  const work = state.plan.filter((n) => n.id !== SYNTHESIS_NODE);
  // A node that had not finished runs again from its start (its events, numbered as before, are not sent twice); one parked goes on where it was.
  for (const node of work) if (!(node.id in state.outputs) && !state.parked?.[node.id]) ctx.setScope(nodeScope(node.id), 0);
  const absorb = (messages: ChatMessage[]) => {
    state.injected.push(...messages);
    return state;
  };
  for (; Object.keys(state.outputs).length < work.length; state.wave++) {
    await ctx.breakpoint(state.wave, absorb);
    const ready = work.filter((n) => !(n.id in state.outputs) && n.depends_on.every((d) => d in state.outputs));
    if (ready.length === 0) throw new RunFailure('invalid_plan', 'The plan has a dependency cycle');
    await settleWave(ctx, state, ready);
  }
  const synthesis = nodeScope(SYNTHESIS_NODE);
  for (let attempt = 0; ; attempt++) {
    const wave = state.wave + attempt;
    await ctx.breakpoint(wave, absorb);
    await ctx.publish('node', { node_id: SYNTHESIS_NODE, status: 'started' }, synthesis);
    const messages: ChatMessage[] = [
      ...history,
      ctx.question(),
      ...work.map((n): ChatMessage => ({ role: 'tool', name: NODE_OUTPUT, toolCallId: n.id, content: state.outputs[n.id] ?? '' })),
      ...state.injected,
    ];
    const { result, text, output } = await ctx.inNode(SYNTHESIS_NODE, async () => {
      const result = await ctx.complete(messages, wave, { tools: [], scope: synthesis, structured: true });
      return { result, ...(await finalAnswer(ctx, result.text, messages, wave, synthesis)) };
    });
    await ctx.publish('node', { node_id: SYNTHESIS_NODE, status: 'succeeded', output: text }, synthesis);
    if (await ctx.tryFinish()) return { answer: text, output, finishReason: result.finishReason, citations: nodeCitations(state) };
    if (attempt >= ctx.agent.maxIterations) throw new RunFailure('max_iterations', 'Injected messages kept arriving past max_iterations');
  }
}
