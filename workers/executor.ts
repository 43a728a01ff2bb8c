import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Logger } from '../src/logger.js';
import type { Models, Run, RunStatus } from '../src/db/models.js';
import { isDependencyOutage } from '../src/http/outage.js';
import { DEFAULT_TOOLS } from '../src/shared/tools.js';
import { DEFAULT_SETTINGS } from '../src/shared/model-settings.js';
import { emptyUsage } from '../src/shared/events.js';
import { ACTIVE_MARKER_TTL_SECONDS } from '../src/shared/redis-keys.js';
import { END_SCOPE, MAIN_SCOPE, RunContext, type AgentSettings, type LoopOutcome, type RunDeps } from './run-context.js';
import { CheckpointWriter, readCheckpoint, Superseded, type Checkpoint } from './checkpoint.js';
import { HandBack, RunCancelled, RunFailure, type RunControl } from './run-control.js';
import { toolsFor } from './tools/registry.js';
import type { ChatMessage, ModelProvider } from './models/types.js';
import { runReact } from './react.js';
import { runDag } from './dag.js';

const HISTORY_LIMIT = 40;
const HEARTBEAT_MS = (ACTIVE_MARKER_TTL_SECONDS * 1000) / 10;

export interface ExecutorDeps extends RunDeps {
  knex: Knex;
  models: Models;
  modelFor(model: string): ModelProvider;
  /** The model of runs without an agent (config.model.defaultModel). */
  defaultModel: string;
  /** Worker deaths a run survives; the next one fails it (a crash loop). */
  maxCrashes: number;
}

/** What the job should do next: nothing (finished or superseded), or go back to the queue. */
export type ExecutionResult = 'finished' | 'superseded' | HandBack['reason'];

type Ending = LoopOutcome | RunFailure | RunCancelled | HandBack | Superseded;

/** Executes one run from its row to its final state (DESIGN §5 steps 2–4), resuming from its checkpoint. */
export class RunExecutor {
  constructor(private readonly deps: ExecutorDeps) {}

  async execute(runId: string, cancel: AbortController, control: RunControl): Promise<ExecutionResult> {
    const run = await this.claim(runId);
    if (!run) {
      await this.republishEnd(runId);
      return 'finished';
    }
    const started = Date.now();
    const agent = await this.agentSettings(run);
    const checkpoint = readCheckpoint(run.checkpoint);
    const ctx = new RunContext(run, agent, this.deps.modelFor(agent.model), toolsFor(agent.tools), control, new CheckpointWriter(this.deps.knex, run.id, run.attempt), this.deps, checkpoint);
    const heartbeat = setInterval(() => {
      ctx.heartbeat().then(({ cancelled }) => cancelled && cancel.abort(new RunCancelled()), () => {});
    }, HEARTBEAT_MS);
    try {
      const ending = await this.runLoop(ctx, run, agent, checkpoint);
      return await this.conclude(ctx, ending, started);
    } finally {
      clearInterval(heartbeat);
    }
  }

  private async runLoop(ctx: RunContext, run: Run, agent: AgentSettings, checkpoint: Checkpoint | undefined): Promise<Ending> {
    try {
      const [cancelPending, history] = await Promise.all([
        this.deps.redis.takeRun(this.deps.keys.runSequence(run.id), this.deps.keys.runCancel(run.id), String(run.attempt)),
        this.history(run, agent),
      ]);
      if (cancelPending) return new RunCancelled();
      if (run.attempt > 1) {
        // `status: running` was event 1 of the first attempt; the checkpoint knows the rest.
        if (!checkpoint) ctx.setScope(MAIN_SCOPE, 1);
        await ctx.announce('status', { status: 'resumed' });
      } else {
        await ctx.publish('status', { status: 'running' });
      }
      if (run.crashes > this.deps.maxCrashes) {
        return new RunFailure('worker_crashed', `The run's worker stopped unexpectedly ${run.crashes} times`, true);
      }
      const loop = checkpoint?.loop;
      return run.mode === 'dag'
        ? await runDag(ctx, history, loop?.kind === 'dag' ? loop : undefined)
        : await runReact(ctx, history, loop?.kind === 'react' ? loop : undefined);
    } catch (err) {
      return this.classify(err, ctx.signal, run);
    }
  }

  private classify(err: unknown, signal: AbortSignal, run: Run): Ending {
    if (err instanceof RunFailure || err instanceof RunCancelled || err instanceof HandBack || err instanceof Superseded) return err;
    if (signal.aborted && (signal.reason instanceof RunCancelled || signal.reason instanceof HandBack)) return signal.reason;
    if (err instanceof Error && err.message.includes('SUPERSEDED')) return new Superseded();
    if (isDependencyOutage(err)) return new HandBack('outage');
    this.deps.logger.error({ err, run_id: run.id }, 'run failed unexpectedly');
    return new RunFailure('internal_error', 'The run failed unexpectedly', true);
  }

  private async conclude(ctx: RunContext, ending: Ending, started: number): Promise<ExecutionResult> {
    const { logger } = this.deps;
    const runId = ctx.run.id;
    if (ending instanceof Superseded) {
      logger.warn({ run_id: runId }, 'run taken over by a newer attempt; stopping this one');
      return 'superseded';
    }
    if (ending instanceof HandBack) {
      await this.deps.knex('runs').update({ handed_back: true }).where({ id: runId, attempt: ctx.run.attempt }).catch(() => {});
      logger.info({ run_id: runId, reason: ending.reason }, 'run handed back to the queue');
      return ending.reason;
    }
    try {
      const status = await this.finalize(ctx, ending, started);
      logger.info({ run_id: runId, mode: ctx.run.mode, status, ms: Date.now() - started }, 'run finished');
      return 'finished';
    } catch (err) {
      const next = this.classify(err, ctx.signal, ctx.run);
      if (next instanceof RunFailure || next instanceof RunCancelled) throw err;
      return this.conclude(ctx, next, started);
    }
  }

  private async finalize(ctx: RunContext, ending: LoopOutcome | RunFailure | RunCancelled, started: number): Promise<RunStatus> {
    if (!(ending instanceof RunFailure || ending instanceof RunCancelled)) {
      await this.succeed(ctx, ending, started);
      return 'succeeded';
    }
    await ctx.release(0);
    const status = ending instanceof RunCancelled ? 'cancelled' : 'failed';
    const error = ending instanceof RunFailure ? { code: ending.code, message: ending.message } : null;
    await this.writeFinal(ctx, { status, error, usage: JSON.stringify(ctx.usage), finished_at: new Date() });
    if (ending instanceof RunFailure) await ctx.publish('error', { ...error!, retryable: ending.retryable }, END_SCOPE);
    await ctx.publish('done', { status, usage: ctx.usage, duration_ms: Date.now() - started }, END_SCOPE);
    await ctx.flush();
    return status;
  }

  /** Marks the run running under a new attempt (the fencing token); counts the deaths of earlier attempts. */
  private async claim(runId: string): Promise<Run | undefined> {
    const { rows } = await this.deps.knex.raw(
      `update runs set
         crashes = crashes + (case when status = 'running' and not handed_back then 1 else 0 end),
         status = 'running', started_at = coalesce(started_at, now()), attempt = attempt + 1, handed_back = false
       where id = ? and status in ('queued', 'running')
       returning *`,
      [runId],
    );
    return rows[0] ? this.deps.models.Run.fromDatabaseJson(rows[0]) : undefined;
  }

  /** The final row, only while this attempt still owns the run. */
  private async writeFinal(ctx: RunContext, patch: Record<string, unknown>): Promise<void> {
    const updated = await this.deps.knex('runs').update(patch).where({ id: ctx.run.id, attempt: ctx.run.attempt, status: 'running' });
    if (updated === 0) throw new Superseded();
  }

  /**
   * A job delivered for a run that is already final (a worker died after writing the final row,
   * before publishing the end): publish the end again; numbered events make that a no-op otherwise.
   */
  private async republishEnd(runId: string): Promise<void> {
    const run = await this.deps.models.Run.query().findById(runId);
    if (!run?.isFinal) return;
    const owner = String(run.attempt);
    const { publisher } = this.deps;
    const usage = { ...emptyUsage(), ...run.usage };
    const duration_ms = run.finished_at && run.started_at ? run.finished_at.getTime() - run.started_at.getTime() : 0;
    if (run.status === 'succeeded') {
      const answer = await this.deps.models.Message.query().findOne({ run_id: run.id, role: 'assistant' });
      if (answer) await publisher.publish(run.id, 'answer', { message_id: answer.id, content: answer.content, finish_reason: run.finish_reason ?? 'stop' }, { scope: END_SCOPE, seq: 1, owner });
    } else if (run.error) {
      await publisher.publish(run.id, 'error', { ...run.error, retryable: false }, { scope: END_SCOPE, seq: 1, owner });
    }
    await publisher.publish(run.id, 'done', { status: run.status as 'succeeded', usage, duration_ms }, { scope: END_SCOPE, seq: 2, owner });
  }

  private async agentSettings(run: Run): Promise<AgentSettings & { tools: string[] }> {
    const agent = run.agent_id ? await this.deps.models.Agent.query().findById(run.agent_id) : undefined;
    const knowledgeBaseIds = agent?.knowledge_base_ids ?? [];
    const tools: string[] = agent?.tools ?? DEFAULT_TOOLS;
    return {
      model: agent?.model ?? this.deps.defaultModel,
      settings: agent?.generationSettings ?? DEFAULT_SETTINGS,
      instructions: agent?.instructions ?? '',
      maxIterations: agent?.max_iterations ?? 8,
      knowledgeBaseIds,
      // An agent with knowledge bases can always search them.
      tools: knowledgeBaseIds.length > 0 && !tools.includes('knowledge_base_retrieve') ? [...tools, 'knowledge_base_retrieve'] : tools,
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

  /** The answer message and the final run row in one statement, then the end events. */
  private async succeed(ctx: RunContext, outcome: LoopOutcome, started: number) {
    const messageId = randomUUID();
    const { rowCount } = await this.deps.knex.raw(
      `with final as (
         update runs set status = 'succeeded', answer = ?, finish_reason = ?, usage = ?::jsonb, finished_at = now()
         where id = ? and attempt = ? and status = 'running' returning conversation_id
       )
       insert into messages (id, conversation_id, run_id, role, content)
       select ?, conversation_id, ?, 'assistant', ? from final`,
      [outcome.answer, outcome.finishReason, JSON.stringify(ctx.usage), ctx.run.id, ctx.run.attempt, messageId, ctx.run.id, outcome.answer],
    );
    if (rowCount === 0) throw new Superseded();
    await ctx.publish('answer', { message_id: messageId, content: outcome.answer, finish_reason: outcome.finishReason }, END_SCOPE);
    await ctx.publish('done', { status: 'succeeded', usage: ctx.usage, duration_ms: Date.now() - started }, END_SCOPE);
    await ctx.flush();
  }
}
