import type { Queue } from 'bullmq';
import type { Knex } from 'knex';
import type { Models, Run } from '../db/models.js';
import type { EventData, StoredEvent } from '../shared/events.js';
import type { InjectPayload, RedisKeys, ScriptedRedis } from '../shared/redis-keys.js';
import { QUEUED_RECHECK_MS, runJobOptions, wakeRunJob, type RunJob } from '../shared/jobs.js';
import type { MultitaskStrategy } from '../shared/multitask.js';
import { isParked } from '../shared/run-statuses.js';
import { leaseOptions, type ApprovalDecision, type Claim, type RunRef } from './protocol-types.js';
import { runProtocol, type WebProtocol } from './run-protocol.js';
import { RunStore, type NewRun } from './run-store.js';
import { StreamReader } from './stream-reader.js';
import { NO_WRITE_POINTS, reaching, WRITES, type WritePoints } from './write-points.js';

export type * from './types.js';

/** How the web asks for a run to start: its ids, its `run` event, its row, its job, and the conversation's rules. */
export interface StartPlan {
  ref: RunRef;
  announced: EventData<'run'>;
  userLimit: number;
  /** PARKED_RUNS_PER_USER when the run carries client tools (it may park for them), else 0: not counted. */
  parkedLimit: number;
  strategy: MultitaskStrategy;
  newRun: NewRun;
  /** The run's job, once the claim says whether it waits behind another run. */
  jobFor(queued: boolean): RunJob;
  /** Told once the claim has published the `run` event, before the row and the job are written. */
  onClaimed?: (ref: RunRef, runEvent: StoredEvent) => void;
}

export type StartResult = { outcome: 'refused'; claim: Claim } | { outcome: 'started'; run: Run; claim: Claim };

/** A conversation held for its deletion: `release()` when it did not happen, `linger(seconds)` when it did. */
export interface DeletionHold {
  release(): Promise<void>;
  linger(seconds: number): Promise<void>;
}

/** What the web's engine is built on: the run queue it adds jobs to, and the clients of the run's record and Redis side. */
export interface WebEngineClients {
  knex: Knex;
  models: Models;
  redis: ScriptedRedis;
  keys: RedisKeys;
  queue: Queue<RunJob>;
}

/** The deployment's settings the engine reads (config.runs, DATABASE_PREPARED_STATEMENTS). */
export interface WebEngineSettings {
  runs: Parameters<typeof leaseOptions>[0];
  preparedStatements: boolean;
}

/** Builds the web's engine; a process builds one, in its composition root, and shares it. */
export function buildWebEngine({ knex, models, redis, keys, queue }: WebEngineClients, settings: WebEngineSettings): WebEngine {
  const store = new RunStore(knex, models, { preparedStatements: settings.preparedStatements });
  return new WebEngine(store, runProtocol(redis, keys, leaseOptions(settings.runs)), queue);
}

/** How many cancels a bulk cancel sends at once. */
const CANCEL_BATCH = 50;

export const runRef = (run: Pick<Run, 'id' | 'conversation_id' | 'user_id'>): RunRef => ({ id: run.id, conversationId: run.conversation_id, userId: run.user_id });

/**
 * The web's face of the run engine (DESIGN §22): start, inject, cancel, decide, submit tool
 * outputs. Each pairs the Redis step that decides (src/engine/run-protocol.ts) with the Postgres
 * record (src/engine/run-store.ts) and the job, in the order src/engine/transitions.ts describes,
 * and wakes the run's job where a parked or queued run must hear what happened. Who may do it
 * (ownership, validation, budgets) is decided before, by the caller (src/runs/service.ts).
 */
export class WebEngine {
  /** Where the relay and the long poll read runs' events. */
  readonly streams: StreamReader;

  private readonly admission: WebProtocol['admission'];
  private readonly signals: WebProtocol['signals'];
  private readonly events: WebProtocol['events'];

  constructor(
    private readonly store: RunStore,
    { admission, signals, events }: WebProtocol,
    private readonly queue: Queue<RunJob>,
    /** Told before and after each write of the transition table (the crash harness); nobody in production. */
    private readonly points: WritePoints = NO_WRITE_POINTS,
  ) {
    this.admission = admission;
    this.signals = signals;
    this.events = events;
    this.streams = new StreamReader(events);
  }

  /** RUN_QUEUE_PER_CONVERSATION: most runs that may wait on one conversation (a claim refused `full` names it). */
  get queueLimit(): number {
    return this.admission.options.queueLimit;
  }

  /**
   * `created`: claims the conversation (or queues behind its active run, as `strategy` says), then
   * writes the queued row and adds the job; a refused claim writes nothing. A failure after the
   * claim undoes it and ends the row `failed` (`enqueue_failed`).
   */
  async start(plan: StartPlan): Promise<StartResult> {
    const { ref, newRun } = plan;
    const claim = await reaching(this.points, WRITES.claimConversation, () => this.admission.claim(ref, plan.announced, plan.userLimit, plan.strategy, plan.parkedLimit));
    if (claim.outcome !== 'claimed' && claim.outcome !== 'queued') return { outcome: 'refused', claim };
    const queued = claim.outcome === 'queued';
    if (claim.event) plan.onClaimed?.(ref, claim.event);
    try {
      const job = plan.jobFor(queued);
      const enqueue = () => this.queue.add('run', job, { ...runJobOptions, jobId: ref.id, ...(queued ? { delay: QUEUED_RECHECK_MS } : {}) });
      let run: Run;
      if (job.stored && !queued) {
        run = await this.createWhileQueueing(newRun, enqueue);
      } else {
        run = await this.create(newRun, job.stored !== undefined);
        await enqueue();
      }
      if (queued) await this.afterQueued(ref, plan.strategy, claim.activeRunId);
      return { outcome: 'started', run, claim };
    } catch (err) {
      await this.undoClaim(ref, queued).catch(() => {});
      await reaching(this.points, WRITES.failUnqueued, () => this.store.failUnqueued(ref.id)).catch(() => {});
      throw err;
    }
  }

  /** Queues an inject while the conversation has an active run: that run's id, or null (nothing queued: 409). */
  inject(userId: string, conversationId: string, payload: InjectPayload): Promise<string | null> {
    return this.signals.inject(userId, conversationId, payload);
  }

  /**
   * Accepts a cancel while the run is queued, running or parked (false when it is final or holds
   * nothing). A parked run, or one queued behind another, has no worker to hear it: its job is woken.
   */
  async cancel(run: Run): Promise<boolean> {
    const accepted = !run.isFinal && (await reaching(this.points, WRITES.requestCancel, () => this.signals.cancel(runRef(run))));
    if (!accepted) return false;
    if (isParked(run.status) || accepted === 'dequeued') await this.wake(run.id);
    return true;
  }

  /**
   * Cancels every run of a user that may still change (an admin disabling or deleting them),
   * queued, running or parked alike, each as `cancel` does; how many were accepted.
   */
  async cancelActiveRunsOf(userId: string): Promise<number> {
    const runs = await this.store.activeRunsOf(userId);
    let cancelled = 0;
    for (let i = 0; i < runs.length; i += CANCEL_BATCH) {
      const accepted = await Promise.all(runs.slice(i, i + CANCEL_BATCH).map((run) => this.cancel(run)));
      cancelled += accepted.filter(Boolean).length;
    }
    return cancelled;
  }

  /** Whether a user still has a run that may change. */
  async hasActiveRuns(userId: string): Promise<boolean> {
    return (await this.store.countActiveRunsOf(userId)) > 0;
  }

  /**
   * Adds again the job of a run left queued without one (its starter died between the row and the
   * job); false when the job is there.
   */
  async requeue(job: RunJob): Promise<boolean> {
    if (await this.queue.getJob(job.runId)) return false;
    await this.queue.add('run', job, { ...runJobOptions, jobId: job.runId });
    return true;
  }

  /**
   * `enqueue_failed` for a run a web left queued without a job (it died between the row and the
   * job, or while undoing a job the queue refused): the row failed first (only while still
   * queued), then the claim undone as that web would have. The client was answered with an error
   * and the claim may be half undone (stream discarded, conversation released), so the run is not
   * run. False when the run has a job (a run waiting behind another has a delayed one) or is no
   * longer queued.
   */
  async abandonUnqueued(ref: RunRef): Promise<boolean> {
    if (await this.queue.getJob(ref.id)) return false;
    if (!(await reaching(this.points, WRITES.failUnqueued, () => this.store.failUnqueued(ref.id)))) return false;
    await this.undoClaim(ref, true);
    return true;
  }

  /** Whether a parked run should wake: every call answered, or a cancel accepted (read only). */
  shouldWake(ref: RunRef): Promise<boolean> {
    return this.signals.shouldWake(ref);
  }

  /**
   * Holds a conversation with no active or waiting run for its deletion (DESIGN §20); null when a
   * run is active or waiting. See Admission.holdForDeletion.
   */
  holdForDeletion(userId: string, conversationId: string, seconds?: number): Promise<DeletionHold | null> {
    return this.admission.holdForDeletion(userId, conversationId, seconds);
  }

  /** Drops a run's event stream from Redis (its data erased with its user or conversation). */
  discardStream(ref: RunRef): Promise<void> {
    return this.events.discardStream(ref);
  }

  /** A person's decision on a gated call; the last one resumes the run (`resumed`). */
  async decide(run: Run, callId: string, decision: ApprovalDecision): Promise<'not_pending' | 'recorded' | 'resuming'> {
    const outcome = run.isFinal ? 'not_pending' : await reaching(this.points, WRITES.decideApproval, () => this.signals.decide(runRef(run), callId, decision));
    if (outcome !== 'all_decided') return outcome;
    // If the worker is still parking it (the job not yet delayed), it sees the decisions itself and wakes it.
    await this.wake(run.id);
    return 'resuming';
  }

  /** The client's outputs of its tool calls, all or none; the last one resumes the run (`resumed`). */
  async submitToolOutputs(run: Run, outputs: { call_id: string; output: string }[]): Promise<{ outcome: 'recorded' | 'resuming' | 'cancelled' } | { outcome: 'not_pending'; callId: string }> {
    const recorded = await reaching(this.points, WRITES.recordToolOutputs, () => this.signals.recordToolOutputs(runRef(run), outputs));
    if (recorded.outcome === 'not_pending') return recorded;
    if (recorded.outcome !== 'all_answered') return { outcome: recorded.outcome };
    await this.wake(run.id);
    return { outcome: 'resuming' };
  }

  /** Whether a run's event stream can still be joined (it expires RUN_STREAM_TTL_S after `done`). */
  streamExists(run: Run): Promise<boolean> {
    return this.events.streamExists(runRef(run));
  }

  /** Moves a run's delayed job to waiting, for a worker to take (a parked run resuming, a queued run's turn). */
  wake(runId: string): Promise<void> {
    return wakeRunJob(this.queue, runId);
  }

  /**
   * A run whose job carries its row (issue 26): the row is written while the job is added, so
   * neither waits for the other. A worker that takes the job before the row is there waits for it
   * or writes it itself (workers/runs/executor.ts). When the write fails the job is settled first, so
   * the caller's undoing (the stream discarded) tells such a worker the run was given up.
   */
  private async createWhileQueueing(newRun: NewRun, enqueue: () => Promise<unknown>): Promise<Run> {
    const [created, queued] = await Promise.allSettled([this.create(newRun, true), enqueue()]);
    if (created.status === 'rejected') {
      if (queued.status === 'fulfilled') await this.queue.remove(newRun.runId).catch(() => 0);
      throw created.reason;
    }
    if (queued.status === 'rejected') throw queued.reason;
    return created.value;
  }

  private create(newRun: NewRun, asynchronousCommit: boolean): Promise<Run> {
    return reaching(this.points, WRITES.create, () => this.store.create(newRun, { asynchronousCommit }));
  }

  /**
   * A run queued behind another: if that one ended while the job was being added, nobody woke the
   * job, so wake it now. A stopped run waiting for approval has no worker to hear the stop: wake it.
   */
  private async afterQueued(ref: RunRef, strategy: MultitaskStrategy, activeRunId: string | null): Promise<void> {
    if (strategy !== 'enqueue' && activeRunId) await this.wake(activeRunId);
    if (await this.admission.holds(ref)) await this.wake(ref.id);
  }

  /** Undoes a claim whose run could not be stored or queued (a run that took the conversation over from it is woken). */
  private async undoClaim(ref: RunRef, queued: boolean): Promise<void> {
    if (!queued || !(await reaching(this.points, WRITES.withdraw, () => this.admission.withdraw(ref)))) {
      const released = await reaching(this.points, WRITES.unclaim, () => this.admission.release(ref));
      if (released.outcome === 'released' && released.successor) await this.wake(released.successor);
    }
    await reaching(this.points, WRITES.discardStream, () => this.events.discardStream(ref));
  }
}
