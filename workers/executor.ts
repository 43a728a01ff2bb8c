import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Logger } from '../src/logger.js';
import type { Models, Run } from '../src/db/models.js';
import { DEFAULT_TOOLS } from '../src/shared/tools.js';
import { RunContext, RunFailure, type AgentSettings, type LoopOutcome, type RunDeps } from './run-context.js';
import { toolsFor } from './tools/registry.js';
import type { ChatMessage, ModelProvider } from './models/types.js';
import { runReact } from './react.js';
import { runDag } from './dag.js';

const HISTORY_LIMIT = 40;

export interface ExecutorDeps extends RunDeps {
  knex: Knex;
  models: Models;
  logger: Logger;
  modelFor(model: string): ModelProvider;
}

/** Executes one run from its row to its final state (DESIGN §5 steps 2–4). */
export class RunExecutor {
  constructor(private readonly deps: ExecutorDeps) {}

  async execute(runId: string, signal: AbortSignal): Promise<void> {
    const { models } = this.deps;
    const [run] = await models.Run.query()
      .patch({ status: 'running', started_at: new Date() })
      .where({ id: runId })
      .whereIn('status', ['queued', 'running'])
      .returning('*');
    // Unknown, or already final: a duplicate delivery of a job that has nothing left to do.
    if (!run) return;
    const started = Date.now();
    const agent = await this.agentSettings(run);
    const tools = toolsFor(agent.tools);
    const ctx = new RunContext(run, agent, this.deps.modelFor(agent.model), tools, signal, this.deps);
    await ctx.publish('status', { status: 'running' });
    let outcome: LoopOutcome | RunFailure;
    try {
      const history = await this.history(run, agent);
      outcome = run.mode === 'dag' ? await runDag(ctx, history) : await runReact(ctx, history);
    } catch (err) {
      outcome = err instanceof RunFailure ? err : this.unexpected(err, run);
    }
    if (outcome instanceof RunFailure) await this.fail(ctx, outcome, started);
    else await this.succeed(ctx, outcome, started);
    const status = outcome instanceof RunFailure ? 'failed' : 'succeeded';
    this.deps.logger.info({ run_id: run.id, mode: run.mode, status, ms: Date.now() - started }, 'run finished');
  }

  private async agentSettings(run: Run): Promise<AgentSettings & { tools: string[] }> {
    const agent = run.agent_id ? await this.deps.models.Agent.query().findById(run.agent_id) : undefined;
    return {
      model: agent?.model ?? 'local',
      instructions: agent?.instructions ?? '',
      maxIterations: agent?.max_iterations ?? 8,
      tools: agent?.tools ?? DEFAULT_TOOLS,
    };
  }

  /** Earlier turns of the conversation (before this run's question), oldest first. */
  private async history(run: Run, agent: AgentSettings): Promise<ChatMessage[]> {
    const { Message } = this.deps.models;
    const questionSeq = Message.query().select('seq').where({ run_id: run.id, role: 'user', injected: false });
    const earlier = await Message.query()
      .where({ conversation_id: run.conversation_id })
      .where('seq', '<', questionSeq)
      .orderBy('seq', 'desc')
      .limit(HISTORY_LIMIT);
    const messages: ChatMessage[] = earlier.reverse().map((m) => (m.role === 'user' ? { role: 'user', content: m.content, injected: m.injected } : { role: 'assistant', content: m.content }));
    return agent.instructions ? [{ role: 'system', content: agent.instructions }, ...messages] : messages;
  }

  private unexpected(err: unknown, run: Run): RunFailure {
    this.deps.logger.error({ err, run_id: run.id }, 'run failed unexpectedly');
    return new RunFailure('internal_error', 'The run failed unexpectedly', true);
  }

  private async succeed(ctx: RunContext, outcome: LoopOutcome, started: number) {
    const { knex } = this.deps;
    const messageId = randomUUID();
    // The answer message and the final run row in one statement.
    await knex.raw(
      `with message as (insert into messages (id, conversation_id, run_id, role, content) values (?, ?, ?, 'assistant', ?))
       update runs set status = 'succeeded', answer = ?, usage = ?::jsonb, finished_at = now() where id = ?`,
      [messageId, ctx.run.conversation_id, ctx.run.id, outcome.answer, outcome.answer, JSON.stringify(ctx.usage), ctx.run.id],
    );
    await ctx.publish('answer', { message_id: messageId, content: outcome.answer, finish_reason: outcome.finishReason });
    await ctx.publish('done', { status: 'succeeded', usage: ctx.usage, duration_ms: Date.now() - started });
  }

  /** A failed run still absorbs every inject that was answered 200, then frees the conversation. */
  private async fail(ctx: RunContext, failure: RunFailure, started: number) {
    let iteration = 0;
    do iteration += 1;
    while ((await ctx.absorbInjects(iteration)).length > 0 || !(await ctx.tryFinish()));
    const error = { code: failure.code, message: failure.message };
    await this.deps.models.Run.query().patch({ status: 'failed', error, usage: ctx.usage, finished_at: new Date() }).where({ id: ctx.run.id });
    await ctx.publish('error', { ...error, retryable: failure.retryable });
    await ctx.publish('done', { status: 'failed', usage: ctx.usage, duration_ms: Date.now() - started });
  }
}
