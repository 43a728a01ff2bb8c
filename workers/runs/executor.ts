import type { Agent, Run, RunStatus } from '../../src/db/models.js';
import { runLogFields } from '../../src/logger.js';
import { isDependencyOutage } from '../../src/shared/outage.js';
import { Superseded } from '../../src/shared/errors.js';
import { runToolNames, type ToolApproval } from '../../src/shared/tools.js';
import type { DocMode } from '../../src/shared/doc-modes.js';
import { DEFAULT_SETTINGS, LOCAL_MODEL, withSampling } from '../../src/shared/model-settings.js';
import type { Sampling } from '../../src/shared/sampling.js';
import { schemaFormat, type OutputFormat } from '../../src/shared/output-schema.js';
import { emptyUsage } from '../../src/shared/events.js';
import { runRef, type BreakpointState, type HistoryBound, type LoadedRun, type RunRef, type WorkerEngine } from '../../src/engine/worker-engine.js';
import { contextWindowOf, DEFAULT_CONTEXT_WINDOW, HISTORY_MAX_MESSAGES, HISTORY_WINDOWS, LOCAL_CONTEXT_WINDOW } from '../../src/shared/context-window.js';
import { prepareHistory, type PreparedHistory } from './compaction.js';
import { RunContext, type AgentSettings, type LoopOutcome, type ToolServices } from './run-context.js';
import { END_SCOPE, MAIN_SCOPE, RunEvents } from './run-events.js';
import { CheckpointWriter, readCheckpoint, type Checkpoint } from './checkpoint.js';
import { AwaitingApproval, HandBack, RunCancelled, RunFailure, type RunControl } from './run-control.js';
import { ToolApprovals, type WaitTimeouts } from './approvals.js';
import type { ClientTool } from '../../src/shared/client-tools.js';
import type { Tool } from '../tools/tool.js';
import { isParked } from '../../src/shared/run-statuses.js';
import { openToolset, type ConnectorRuntime } from '../tools/toolset.js';
import type { ModelProvider } from '../models/types.js';
import type { ModelImages } from '../../src/files/model-images.js';
import type { BudgetLedger, BudgetRef } from '../../src/budgets/ledger.js';
import { BudgetSpent, DEFAULT_RESERVATIONS, RunBudget, type ReservationSettings } from './run-budget.js';
import type { AgentSpan, AttemptOutcome } from './telemetry.js';
import { LOOPS } from './loops.js';
import { giveMemories, MEMORY_WINDOW_SHARE, recallBeforeRun } from './memory.js';
import { QUEUED_RECHECK_MS, type StoredRun } from '../../src/shared/jobs.js';

/** What the run's history a job reads is bounded by (DESIGN §20): HistoryBound. */
const historyBound = (defaultContextWindow: number): HistoryBound => ({
  messages: HISTORY_MAX_MESSAGES,
  tokens: HISTORY_WINDOWS * Math.max(LOCAL_CONTEXT_WINDOW, defaultContextWindow),
  windows: HISTORY_WINDOWS,
});

/** Each attempt's prepared history: the token counts it learnt are kept with the run's end. */
const histories = new WeakMap<RunContext, PreparedHistory>();

const DEFAULT_CLIENT_TOOL_TIMEOUT_MS = 600_000;

/** A client tool as the model is offered it (DESIGN §23): never run by the worker, whose loop parks on its calls. */
const asModelTool = ({ name, description, parameters }: ClientTool): Tool => ({
  name,
  description: description ?? '',
  parameters: parameters ?? { type: 'object', properties: {} },
  client: true,
  run: () => Promise.reject(new Error(`${name} is a client tool: its client runs it`)),
});

/** A parked run keeps its conversation this much longer than the approval timeout. */
const PARKED_MARGIN_SECONDS = 3600;

export interface RunLimits {
  /** APPROVAL_TIMEOUT_S: how long a tool call waits for a person's decision. */
  approvalTimeoutMs: number;
  /** CLIENT_TOOL_TIMEOUT_S: how long a client tool call waits for the client's output (DESIGN §23); 600 s when absent. */
  clientToolTimeoutMs?: number;
  /** RUN_MAX_EVENTS: events a run may publish before it fails. */
  maxEvents: number;
  /** RUN_MAX_DURATION_S: wall time from the run's first start before it fails. */
  maxDurationMs: number;
  /** Worker deaths a run survives; the next one fails it (a crash loop). */
  maxCrashes: number;
}

/** A job to run: the run's ids, and BullMQ's own counts of the job's starts and of the worker deaths it survived. */
export interface Assignment {
  runId: string;
  conversationId?: string;
  userId?: string;
  /** The fencing token: BullMQ's atomic count of the job's starts, so it only grows. */
  attempt: number;
  /** Times the job's worker died (BullMQ's stalled count). */
  crashes: number;
  /** The request that started the run (absent in jobs of an earlier release). */
  requestId?: string;
  /** The token budgets the run is charged to (none in jobs of an earlier release). */
  budgets?: BudgetRef[];
  /** The trace of the request that started the run (DESIGN §18): the attempt's spans join it. */
  traceparent?: string;
  /** The run was queued behind its conversation's active run (DESIGN §19): it starts once admitted. */
  queued?: true;
  /** The run's row as the web wrote it, asynchronously committed: written again if Postgres lost it. */
  stored?: StoredRun;
}

export interface ExecutorDeps extends ToolServices {
  /** The run engine (DESIGN §22): every write of the run goes through it. */
  engine: WorkerEngine;
  /** Delivers a run's webhooks (DESIGN §10): its final (or waiting) state's outbox rows. */
  webhooks: { dispatch(deliveryIds: string[]): void };
  modelFor(model: string): ModelProvider;
  /** The model of runs without an agent (config.model.defaultModel). */
  defaultModel: string;
  /** DEFAULT_CONTEXT_WINDOW: gateway models' window when their agent sets none (DESIGN §20). */
  defaultContextWindow?: number;
  limits: RunLimits;
  /** What connector tools share across the worker's runs. */
  connectors: ConnectorRuntime;
  /** The bytes of the images runs show their models. */
  images: ModelImages;
  /** Where model calls' tokens are charged (DESIGN §18). */
  budgets: BudgetLedger;
  /** How model calls hold their budgets while in flight (DESIGN §21); the configuration's defaults when absent. */
  budgetReservations?: ReservationSettings;
  /** Wakes the delayed job of a run queued behind another (DESIGN §19) once that one's end is recorded. */
  wakeRun(runId: string): Promise<void>;
}

/**
 * What the job does next: end (the run finished, or a newer attempt owns it); go back to the queue
 * (shutdown, outage); wait, delayed until the approval deadline, for a person's decisions; or,
 * queued behind another run (DESIGN §19), wait to be admitted (`recheck`: whether it may have been
 * admitted while the job was being delayed, so the caller looks once more).
 */
export type ExecutionResult =
  | { next: 'end' }
  | { next: 'retry'; reason: HandBack['reason'] }
  | { next: 'wait'; ref: RunRef; untilMs: number }
  | { next: 'queued'; ref: RunRef; untilMs: number; recheck: boolean };

/** A queued run whose conversation is handed over but whose predecessor is still being resumed looks again this soon. */
const PREDECESSOR_RECHECK_MS = 1000;
const END = { next: 'end' } as const;

type Ending = LoopOutcome | RunFailure | RunCancelled | HandBack | Superseded | AwaitingApproval;


/** Executes one run from its row to its final state (DESIGN §5 steps 2–4), resuming from its checkpoint. */
export class RunExecutor {
  private readonly engine: WorkerEngine;

  constructor(private readonly deps: ExecutorDeps) {
    this.engine = deps.engine;
  }

  async execute(assignment: Assignment, cancel: AbortController, control: RunControl): Promise<ExecutionResult> {
    const { runId, attempt, crashes } = assignment;
    const { limits } = this.deps;
    const received = Date.now();
    const waiting = assignment.queued ? await this.awaitTurn(assignment) : undefined;
    if (waiting) return waiting;
    const [taken, loaded] = await this.engine.take(assignment, this.historyBound);
    if (!loaded) {
      this.deps.logger.warn({ run_id: runId }, 'a run job names no run; dropping it');
      return END;
    }
    const { run } = loaded;
    // One child logger per run: every line of it carries the run's ids and the request that started it.
    const log = this.deps.logger.child({ ...runLogFields(run), request_id: assignment.requestId ?? null });
    if (run.isFinal) {
      await this.republishEnd(run, attempt);
      return END;
    }
    // Back from waiting for approval or its client: the run counts toward its user's cap again.
    if (isParked(run.status)) await this.engine.rejoin(runRef(run));
    Object.assign(run, { attempt, crashes });
    // Every write and event of this attempt needs its claim to have held: written by the statement that loaded
    // the run, or still on its way (a run with nothing to read starts before it). A refused claim stops the attempt.
    const claimed = Promise.resolve(loaded.claimed ?? true).then((held) => {
      if (!held) throw new Superseded();
    });
    claimed.catch((err: unknown) => cancel.abort(err));
    const started = Date.now();
    const agent = { ...agentSettings(loaded.agent, this.deps.defaultModel, run.doc_mode, run.sampling), outputFormat: outputFormatOf(run, loaded.agent) };
    const model = this.deps.modelFor(agent.model);
    const checkpoint = readCheckpoint(run.checkpoint);
    const ref = runRef(run);
    const imageSource = this.deps.images.forRun(run.user_id);
    // A gateway model's first call sends the question's images: they are read while the loop starts.
    if (agent.model !== LOCAL_MODEL) for (const image of loaded.attachments) imageSource.inline(image).catch(() => {});
    const toolset = openToolset({ runId: run.id, userId: run.user_id, tools: agent.tools, connectorIds: agent.connectorIds, signal: control.signal }, this.deps.connectors, log);
    const clientTools = (run.client_tools ?? []).map(asModelTool);
    const ctx = new RunContext({
      run, ref, agent, model, control, engine: this.engine, taken, claimed,
      // Client tools are offered beside the agent's (DESIGN §23); their calls park the run rather than run here.
      tools: clientTools.length > 0 ? toolset.tools.then((tools) => [...tools, ...clientTools]) : toolset.tools,
      events: new RunEvents(this.engine, ref, { deterministic: model.deterministic, attempt, seqs: checkpoint?.seqs }, limits.maxEvents, claimed),
      checkpoints: new CheckpointWriter(this.engine, run.id, attempt, claimed),
      services: { ...this.deps, logger: log },
      approvals: new ToolApprovals(this.engine, ref, String(attempt), agent.toolApproval, this.waitTimeouts, new Set(clientTools.map((t) => t.name))),
      activeBeforeMs: checkpoint?.activeMs ?? (run.started_at ? Date.now() - run.started_at.getTime() : 0),
      resumeFrom: checkpoint,
      budget: new RunBudget(this.deps.budgets, assignment.budgets ?? [], this.deps.budgetReservations ?? DEFAULT_RESERVATIONS),
      images: loaded.attachments,
      imageSource,
    });
    const deadline = this.watchDuration(ctx, cancel);
    const heartbeat = setInterval(() => {
      ctx.heartbeat().then(({ cancelPending }) => cancelPending && cancel.abort(new RunCancelled()), () => {});
    }, this.engine.heartbeatMs);
    const attemptRun = async (span?: AgentSpan) => {
      const ending = await this.runLoop(ctx, loaded, checkpoint, taken.cancelPending);
      span?.ended(outcomeOf(ending), ctx.usage);
      return this.conclude(ctx, ending, started);
    };
    try {
      const { tracer } = this.deps;
      if (!tracer) return await attemptRun();
      const invocation = { runId: run.id, conversationId: run.conversation_id, mode: run.mode, attempt, agentId: loaded.agent?.id ?? null, agentName: loaded.agent?.name ?? null, model: agent.model, apiFormat: agent.settings.apiFormat };
      return await tracer.invokeAgent(invocation, assignment.traceparent, received, attemptRun);
    } finally {
      clearInterval(heartbeat);
      clearTimeout(deadline);
      await toolset.close();
    }
  }

  /**
   * A run queued behind another (DESIGN §19) starts only once its conversation is handed to it and
   * every run before it has recorded its end; until then its job waits, delayed.
   */
  private async awaitTurn({ runId, conversationId, userId }: Assignment): Promise<ExecutionResult | undefined> {
    if (!conversationId || !userId) return undefined;
    const ref = { id: runId, conversationId, userId };
    const admission = await this.engine.admit(ref);
    if (admission === 'wait') return { next: 'queued', ref, untilMs: Date.now() + QUEUED_RECHECK_MS, recheck: true };
    if (admission === 'predecessor') return { next: 'queued', ref, untilMs: Date.now() + PREDECESSOR_RECHECK_MS, recheck: false };
    // Cancelled while it waited ('end'): it goes straight to its end (its take sees the cancel), running nothing.
    return undefined;
  }

  /** Whether a queued run's job, just delayed, was admitted meanwhile (the wake found it still active): promote it. */
  admitted(ref: RunRef): Promise<boolean> {
    return this.engine.holds(ref);
  }

  /** RUN_MAX_DURATION_S counts the time a run spends running, across attempts (not waiting for approval). */
  private watchDuration(ctx: RunContext, cancel: AbortController): NodeJS.Timeout {
    const { maxDurationMs } = this.deps.limits;
    const left = maxDurationMs - ctx.activeMs;
    return setTimeout(() => cancel.abort(new RunFailure('run_max_duration', `The run reached RUN_MAX_DURATION_S (${maxDurationMs / 1000} s)`)), Math.max(0, left));
  }

  private get historyBound(): HistoryBound {
    return historyBound(this.deps.defaultContextWindow ?? DEFAULT_CONTEXT_WINDOW);
  }

  private async runLoop(ctx: RunContext, loaded: LoadedRun, checkpoint: Checkpoint | undefined, cancelPending: boolean): Promise<Ending> {
    const { run } = ctx;
    try {
      if (cancelPending) return new RunCancelled();
      if (run.attempt > 1) {
        // `status: running` was event 1 of the first attempt; the checkpoint knows the rest.
        if (!checkpoint) ctx.setScope(MAIN_SCOPE, 1);
        void ctx.announce('status', { status: 'resumed' });
      } else {
        void ctx.publish('status', { status: 'running' });
      }
      if (run.crashes > this.deps.limits.maxCrashes) {
        return new RunFailure('worker_crashed', `The run's worker stopped unexpectedly ${run.crashes} times`, true);
      }
      // Compacted before the loop's first step (DESIGN §20); an attempt resuming from a checkpoint uses the stored summary as it is.
      const window = contextWindowOf(ctx.agent.model, loaded.agent?.context_window, this.deps.defaultContextWindow ?? DEFAULT_CONTEXT_WINDOW);
      // DESIGN §25: the memories closest to the question are recalled while the history is read; a resumed attempt has them in its checkpoint.
      const recalling = checkpoint || !ctx.agent.memoryAgentId ? undefined : recallBeforeRun(ctx);
      recalling?.catch(() => {});
      const reserved = recalling ? Math.floor(window * MEMORY_WINDOW_SHARE) : 0;
      const prepared = await prepareHistory(ctx, loaded, { window, compact: !checkpoint, store: this.engine, reserved });
      histories.set(ctx, prepared);
      const history = recalling ? await giveMemories(ctx, prepared.messages, await recalling, reserved, prepared.counter) : prepared.messages;
      const loop = checkpoint?.loop;
      return await LOOPS[run.mode](ctx, history, loop);
    } catch (err) {
      return this.classify(err, ctx);
    }
  }

  private classify(err: unknown, { signal, log }: RunContext): Ending {
    if (err instanceof RunFailure || err instanceof RunCancelled || err instanceof HandBack || err instanceof Superseded || err instanceof AwaitingApproval) return err;
    const reason: unknown = signal.aborted ? signal.reason : undefined;
    if (reason instanceof RunCancelled || reason instanceof HandBack || reason instanceof RunFailure || reason instanceof Superseded) return reason;
    // The claim that a started attempt waited for could not be written (see RunExecutor.execute).
    if (reason !== undefined && isDependencyOutage(reason)) return new HandBack('outage');
    if (isDependencyOutage(err)) return new HandBack('outage');
    log.error({ err }, 'run failed unexpectedly');
    return new RunFailure('internal_error', 'The run failed unexpectedly', true);
  }

  private async conclude(ctx: RunContext, ending: Ending, started: number): Promise<ExecutionResult> {
    const { log } = ctx;
    const runId = ctx.run.id;
    if (ending instanceof Superseded) {
      log.warn('run taken over by a newer attempt; stopping this one');
      return END;
    }
    if (ending instanceof HandBack) {
      await ctx.claimed.then(() => this.engine.handBack(runId, ctx.run.attempt)).catch(() => {});
      log.info({ reason: ending.reason }, 'run handed back to the queue');
      return { next: 'retry', reason: ending.reason };
    }
    try {
      if (ending instanceof AwaitingApproval) return await this.park(ctx, ending);
      const status = await this.finalize(ctx, ending, started);
      const { mode } = ctx.run;
      log.info({ mode, status, ms: Date.now() - started }, 'run finished');
      this.deps.metrics.runsFinished.inc({ mode, status });
      this.deps.metrics.runDuration.observe({ mode, status }, (Date.now() - started) / 1000);
      return END;
    } catch (err) {
      const next = this.classify(err, ctx);
      if (next instanceof RunFailure || next instanceof RunCancelled) throw err;
      return this.conclude(ctx, next, started);
    }
  }

  /**
   * The run waits for a person (DESIGN §11): its row `waiting` with the checkpoint to resume from
   * (and the run.waiting webhook), then `status: waiting`, so a read right after the event finds the
   * row waiting (DESIGN §21). The job is then delayed until the deadline: no worker slot, no lock.
   */
  private async park(ctx: RunContext, awaiting: AwaitingApproval): Promise<ExecutionResult> {
    const { run, usage } = ctx;
    await ctx.claimed;
    await ctx.flush();
    // Client tool calls waiting (DESIGN §23) park the run `requires_action` with them on the row.
    const clientCalls = awaiting.clientCalls;
    const status = clientCalls.length > 0 ? 'requires_action' : 'waiting';
    // Numbered before the checkpoint, so the resumed run numbers its events after it.
    const waiting = ctx.number('status', { status });
    const requiredAction = clientCalls.length > 0 ? { tool_calls: clientCalls } : null;
    const { deliveries } = await this.engine.park(run, { usage, activeMs: ctx.activeMs, checkpoint: JSON.stringify(ctx.snapshot(awaiting.state!)), requiredAction });
    await ctx.publishNumbered(waiting);
    this.deliver(deliveries);
    ctx.log.info({ until: new Date(awaiting.deadlineMs).toISOString(), status }, status === 'waiting' ? 'run waiting for approval' : "run waiting for its client's tool outputs");
    return { next: 'wait', ref: runRef(run), untilMs: awaiting.deadlineMs };
  }

  private get waitTimeouts(): WaitTimeouts {
    return { approvalMs: this.deps.limits.approvalTimeoutMs, clientMs: this.deps.limits.clientToolTimeoutMs ?? DEFAULT_CLIENT_TOOL_TIMEOUT_MS };
  }

  /** After the job is delayed: the run is parked; true when its answers all came in meanwhile (resume it now). */
  parked(ref: RunRef): Promise<boolean> {
    const { approvalMs, clientMs } = this.waitTimeouts;
    return this.engine.parked(ref, Math.ceil(Math.max(approvalMs, clientMs) / 1000) + PARKED_MARGIN_SECONDS);
  }

  /** The run's end, written by the engine in its crash-safe order; this attempt publishes the end events when asked. */
  private async finalize(ctx: RunContext, ending: LoopOutcome | RunFailure | RunCancelled, started: number): Promise<RunStatus> {
    const { run, usage } = ctx;
    await ctx.claimed;
    if (!(ending instanceof RunFailure || ending instanceof RunCancelled)) {
      const { answer, output, finishReason, citations } = ending;
      const prepared = histories.get(ctx);
      const tokens = prepared ? { answerTokens: prepared.counter.count(answer), counted: prepared.counted } : {};
      const deliveries = await this.engine.endSucceeded(run, { answer, output, finishReason, citations, usage, durationMs: Date.now() - started, model: ctx.agent.model, ...tokens }, async (messageId) => {
        void ctx.publish('answer', { message_id: messageId, content: answer, finish_reason: finishReason, citations, ...structured(output) }, END_SCOPE);
        void ctx.publish('done', { status: 'succeeded', usage, duration_ms: Date.now() - started }, END_SCOPE);
        await ctx.flush();
      });
      this.deliver(deliveries);
      await this.handOver(ctx);
      return 'succeeded';
    }
    const error = ending instanceof RunFailure ? { code: ending.code, message: ending.message } : null;
    const { status, deliveries } = await this.engine.endFailed(run, {
      cancelled: ending instanceof RunCancelled,
      release: () => ctx.release(0),
      end: (stop) => ({ error, usage, durationMs: Date.now() - started, model: ctx.agent.model, answer: ending instanceof BudgetSpent ? ending.answerSoFar : stop === 'interrupt' ? ctx.saidSoFar() : null }),
      announce: async (status) => {
        if (ending instanceof RunFailure) void ctx.publish('error', { ...error!, retryable: ending.retryable }, END_SCOPE);
        void ctx.publish('done', { status, usage, duration_ms: Date.now() - started }, END_SCOPE);
        await ctx.flush();
      },
    });
    this.deliver(deliveries);
    await this.handOver(ctx);
    return status;
  }

  /** The queued run that took the conversation over starts now that this run's end is recorded (DESIGN §19). */
  private async handOver(ctx: RunContext): Promise<void> {
    if (ctx.successor) await this.deps.wakeRun(ctx.successor).catch((err: unknown) => ctx.log.warn({ err, next_run_id: ctx.successor }, 'could not wake the next queued run; it starts within its recheck delay'));
  }

  private deliver(deliveries: string[]): void {
    if (deliveries.length > 0) this.deps.webhooks.dispatch(deliveries);
  }

  /** A job delivered for a run that is already final: the engine publishes its end again if the stream lacks it (WorkerEngine.endAgain). */
  private republishEnd(run: Run, attempt: number): Promise<void> {
    return this.engine.endAgain(run, async (answer) => {
      const events = new RunEvents(this.engine, runRef(run), { deterministic: true, attempt }, Infinity);
      const usage = { ...emptyUsage(), ...run.usage };
      const duration_ms = run.finished_at && run.started_at ? run.finished_at.getTime() - run.started_at.getTime() : 0;
      if (answer) void events.publish('answer', { message_id: answer.id, content: answer.content, finish_reason: run.finish_reason ?? 'stop', citations: answer.citations ?? [], ...structured(run.output ?? undefined) }, END_SCOPE);
      else if (run.error) void events.publish('error', { ...run.error, retryable: false }, END_SCOPE);
      void events.publish('done', { status: run.status as 'succeeded', usage, duration_ms }, END_SCOPE);
      await events.flush();
    });
  }
}

/** The answer event's `output` (DESIGN §23), only for runs that have one. */
const structured = (output: unknown) => (output === undefined ? {} : { output });

/** DESIGN §23: the run's own output format wins over its agent's output_schema. */
function outputFormatOf(run: Run, agent: Agent | undefined): OutputFormat | undefined {
  if (run.output_format) return run.output_format;
  return agent?.output_schema ? schemaFormat(agent.output_schema) : undefined;
}

function agentSettings(agent: Agent | undefined, defaultModel: string, docMode: DocMode | null, sampling: Sampling | null): AgentSettings & { tools: string[]; connectorIds: string[]; toolApproval: ToolApproval } {
  // doc_mode `off`: no knowledge tools for this run (DESIGN §14).
  const knowledgeBaseIds = docMode === 'off' ? [] : (agent?.knowledge_base_ids ?? []);
  return {
    model: agent?.model ?? defaultModel,
    settings: withSampling(agent?.generationSettings ?? DEFAULT_SETTINGS, sampling),
    instructions: agent?.instructions ?? '',
    maxIterations: agent?.max_iterations ?? 8,
    knowledgeBaseIds,
    docMode: docMode ?? 'auto',
    toolApproval: agent?.tool_approval ?? 'never',
    connectorIds: agent?.connector_ids ?? [],
    tools: runToolNames(agent, docMode),
    ...(agent?.memory ? { memoryAgentId: agent.id } : {}),
  };
}

/** How an attempt ended, as its `invoke_agent` span records it (DESIGN §18). */
function outcomeOf(ending: Ending): AttemptOutcome {
  if (ending instanceof RunFailure) return { status: 'failed', errorType: ending.code };
  if (ending instanceof RunCancelled) return { status: 'cancelled' };
  if (ending instanceof AwaitingApproval) return { status: 'waiting' };
  if (ending instanceof HandBack) return { status: 'handed_back' };
  if (ending instanceof Superseded) return { status: 'superseded' };
  return { status: 'succeeded' };
}
