import { setTimeout as sleep } from 'node:timers/promises';
import type { Message, Run } from '../db/models.js';
import type { Logger } from '../logger.js';
import type { RunJob } from '../shared/jobs.js';
import type { StopKind } from '../shared/multitask.js';
import type { BreakpointState, FinishOutcome, OutgoingEvent, ReleaseOutcome, RunRef } from './protocol-types.js';
import type { RunProtocol } from './run-protocol.js';
import type { RunSignals } from './run-signals.js';
import type { AttemptClaim, Compaction, FailedEnd, HistoryBound, LoadedRun, NewRun, RunStore, SucceededEnd } from './run-store.js';
import { runRef } from './web-engine.js';
import { NO_WRITE_POINTS, reaching, WRITES, type WritePoints } from './write-points.js';

// The types the worker's loops share with the engine: they read them here, not from its Redis or Postgres halves.
export type { ApprovalDecision, BreakpointState, OutgoingEvent, RunRef } from './protocol-types.js';
export type { Compaction, CountedMessage, HistoryBound, HistoryMessage, LoadedRun } from './run-store.js';
export type { StopKind } from '../shared/multitask.js';
export { runRef };

/** How long a job that carries its run's row waits for the web's write of it before writing it itself. */
const ROW_WAIT_MS = 3000;

/** A job's view of its run: which run, which attempt, and the row it may carry. */
export type Assignment = Pick<RunJob, 'runId' | 'conversationId' | 'userId' | 'stored'> & { attempt: number; crashes: number };

/** The run as taken: `claimed` says whether this attempt's claim held (still on its way when the run starts before it). */
export type TakenRun = [BreakpointState, (LoadedRun & { claimed?: boolean | Promise<boolean> }) | undefined];

/** Whether a queued run may start: `start`, `wait` (behind another run), `predecessor` (handed over, the run before still recording its end), `end` (cancelled while it waited). */
export type Admission = 'start' | 'wait' | 'predecessor' | 'end';

/** How a failing or cancelled attempt takes part in its end (WorkerEngine.endFailed). */
export interface FailingAttempt {
  /** It stops on a cancel (a person's, or a newer run's interrupt or rollback), not on a failure. */
  cancelled: boolean;
  /** Announces whatever was injected, then releases the conversation (a pending cancel does not win). */
  release(): Promise<void>;
  /** The final row's contents once the stop is known (an interrupted run keeps what it had said). */
  end(stop: StopKind | undefined): Omit<FailedEnd, 'status' | 'rollback'>;
  /** Publishes the end events (`error` for a failure, then `done`) and waits for them. */
  announce(status: FailedEnd['status']): Promise<void>;
}

/**
 * The worker's face of the run engine (DESIGN §22): take, breakpoint, park, finish, hand back.
 * Each pairs the attempt's hold in Redis (src/engine/run-protocol.ts) with the row in Postgres
 * (src/engine/run-store.ts), as the transitions of src/engine/transitions.ts say; the loops
 * (workers/runs) decide what to do, this decides what it means for the run.
 */
export class WorkerEngine {
  private readonly admission: RunProtocol['admission'];
  private readonly signals: RunProtocol['signals'];
  private readonly hold: RunProtocol['hold'];
  private readonly events: RunProtocol['events'];

  constructor(
    private readonly store: RunStore,
    { admission, signals, hold, events }: RunProtocol,
    private readonly logger: Logger,
    /** Told before and after each write of the transition table (the crash harness); nobody in production. */
    private readonly points: WritePoints = NO_WRITE_POINTS,
  ) {
    this.admission = admission;
    this.signals = signals;
    this.hold = hold;
    this.events = events;
  }

  /**
   * `started` / `superseded` / `resumed`: takes the run in Redis (fencing out older attempts) while
   * reading and claiming it in Postgres (one statement marks it running under this attempt): one
   * round trip each, side by side. A job from an earlier release names only the run, so it is read first.
   * A first attempt at a run that opens its conversation without an agent has nothing to read: it
   * starts once taken in Redis, its claim still on its way (`claimed`, issue 36); the run's events
   * and writes wait for that claim (a refused one supersedes the attempt before it publishes).
   */
  async take(assignment: Assignment, bound: HistoryBound): Promise<TakenRun> {
    const { runId, conversationId, userId, attempt, crashes, stored } = assignment;
    const claim = { attempt, crashes };
    if (conversationId && userId) {
      const ref = { id: runId, conversationId, userId };
      const newRun: NewRun | undefined = stored && { ...stored, runId, conversationId, userId, attachments: [] };
      const loading = this.claim(runId, bound, claim).then((loaded) => (loaded || !newRun ? loaded : this.awaitRow(newRun, bound, claim)));
      if (newRun && stored?.opensConversation && !stored.agentId && attempt === 1) {
        const claimed = loading.then((loaded) => loaded?.claimed === true);
        claimed.catch(() => {});
        return [await this.takeHold(ref, attempt), { ...this.store.assumeClaimed(newRun, claim), claimed }];
      }
      return Promise.all([this.takeHold(ref, attempt), loading]);
    }
    const loaded = await this.claim(runId, bound, claim);
    if (!loaded || loaded.run.isFinal) return [{ cancelPending: false, waiting: [] }, loaded];
    return [await this.takeHold(runRef(loaded.run), attempt), loaded];
  }

  /** The run read and claimed for this attempt (one statement). */
  private claim(runId: string, bound: HistoryBound, claim: AttemptClaim): ReturnType<RunStore['load']> {
    return reaching(this.points, WRITES.claim, () => this.store.load(runId, bound, claim));
  }

  /** The attempt's hold in Redis: takeAttempt and the first breakpoint, one round trip. */
  private async takeHold(ref: RunRef, attempt: number): Promise<BreakpointState> {
    this.points.reach(WRITES.takeAttempt, 'before');
    this.points.reach(WRITES.takeBreakpoint, 'before');
    const state = await this.hold.take(ref, attempt);
    this.points.reach(WRITES.takeAttempt, 'after');
    this.points.reach(WRITES.takeBreakpoint, 'after');
    return state;
  }

  /** A queued run (DESIGN §19) starts once its conversation is handed to it and every run before it has recorded its end. */
  async admit(ref: RunRef): Promise<Admission> {
    const admission = await reaching(this.points, WRITES.admitQueued, () => this.admission.admit(ref));
    if (admission === 'wait') return 'wait';
    if (admission === 'end') return 'end';
    return (await this.store.admitQueued(ref.id, ref.conversationId)) ? 'start' : 'predecessor';
  }

  /** A run back from waiting for approval or its client counts toward its user's cap again. */
  rejoin(ref: RunRef): Promise<void> {
    return reaching(this.points, WRITES.rejoin, () => this.signals.rejoin(ref));
  }

  /** Keeps the hold alive; reports a pending cancel and the injects waiting. */
  breakpoint(ref: RunRef): Promise<BreakpointState> {
    return reaching(this.points, WRITES.breakpoint, () => this.hold.breakpoint(ref));
  }

  /** The first `count` injects are in the checkpoint: they leave the list. */
  acknowledge(ref: RunRef, count: number): Promise<number> {
    return this.hold.acknowledge(ref, count);
  }

  /** `parked_for_approval` / `parked_for_client_tools`: the row, its checkpoint and what it waits for (the job is delayed next). */
  park(run: Run, progress: Parameters<RunStore['park']>[1]): Promise<{ deliveries: string[] }> {
    return reaching(this.points, WRITES.park, () => this.store.park(run, progress));
  }

  /** After the job is delayed: the run keeps its conversation while it waits; true when it must wake at once. */
  parked(ref: RunRef, ttlSeconds: number): Promise<boolean> {
    return reaching(this.points, WRITES.parkRun, () => this.signals.park(ref, ttlSeconds));
  }

  /** The run's one end decision in Redis: finished (conversation released), an inject waiting, or a cancel pending (which wins). */
  finish(ref: RunRef, owner: string): Promise<FinishOutcome> {
    return reaching(this.points, WRITES.finish, () => this.admission.finish(ref, owner));
  }

  /** Failing or cancelling: frees the conversation unless an inject is still waiting to be announced. */
  release(ref: RunRef, owner: string): Promise<ReleaseOutcome> {
    return reaching(this.points, WRITES.release, () => this.admission.release(ref, owner));
  }

  /**
   * `succeeded`, once finishRun said `finished` (the loop's tryFinish): the final row, the answer and
   * the webhook outbox in one transaction, then `announce` publishes `answer` and `done`, then the
   * run is forgotten. A worker dying between the row and `done` leaves a final run whose next job
   * publishes its end again (endAgain). The webhook deliveries to dispatch.
   */
  async endSucceeded(run: Run, end: SucceededEnd, announce: (messageId: string) => Promise<void>): Promise<string[]> {
    const { messageId, deliveries } = await reaching(this.points, WRITES.succeed, () => this.store.succeed(run, end));
    await announce(messageId);
    await this.forget(runRef(run));
    return deliveries;
  }

  /**
   * `failed` / `cancelled` / `interrupted` / `rolled_back`: why a cancelled run stops is read, the
   * conversation released, then the final row and the webhook outbox, the end events, and the run
   * forgotten (its cancel flag with it: until then an attempt killed after the release leaves the
   * stop to the next one). Its status and the webhook deliveries to dispatch.
   */
  async endFailed(run: Run, attempt: FailingAttempt): Promise<{ status: FailedEnd['status']; deliveries: string[] }> {
    const ref = runRef(run);
    const stop = attempt.cancelled ? await this.signals.stopKind(ref) : undefined;
    await attempt.release();
    const status = stop === 'interrupt' ? 'interrupted' : stop ? 'cancelled' : 'failed';
    const { deliveries } = await reaching(this.points, WRITES.fail, () => this.store.fail(run, { ...attempt.end(stop), status, rollback: stop === 'rollback' }));
    await attempt.announce(status);
    await this.forget(ref);
    return { status, deliveries };
  }

  /**
   * A job delivered for a run that is already final (a worker died after writing the final row,
   * before publishing the end): `announce` publishes the end again from the row and its answer,
   * unless the stream already ends with `done` (or has expired); then the run is forgotten as its
   * first end would have.
   */
  async endAgain(run: Run, announce: (answer: Message | undefined) => Promise<void>): Promise<void> {
    const ref = runRef(run);
    const last = await this.events.lastEvent(ref);
    if (last && last.type !== 'done') await announce(await this.store.answerOf(run));
    await this.forget(ref);
  }

  /** Once `done` is in the stream: the run's numbering and approvals dropped. */
  private forget(ref: RunRef): Promise<void> {
    return reaching(this.points, WRITES.forget, () => this.hold.forget(ref));
  }

  /** Appends the attempt's events to the run's stream (fenced by `owner`, idempotent per scope and seq). */
  publish(ref: RunRef, owner: string, events: OutgoingEvent[]): Promise<number> {
    return this.events.publish(ref, owner, events);
  }

  /** Registers the calls that wait for a person's decision or the client's output, and reads their answers (RunSignals.requestApprovals). */
  requestApprovals(...args: Parameters<RunSignals['requestApprovals']>): ReturnType<RunSignals['requestApprovals']> {
    return reaching(this.points, WRITES.requestApprovals, () => this.signals.requestApprovals(...args));
  }

  /** The loop's state, fenced by the attempt that owns the run. */
  saveCheckpoint(runId: string, attempt: number, checkpoint: string): Promise<void> {
    return this.store.saveCheckpoint(runId, attempt, checkpoint);
  }

  /** The conversation's new summary and the checkpoint after it, in one fenced statement (DESIGN §20). */
  compact(run: Run, compaction: Compaction): Promise<void> {
    return this.store.compact(run, compaction);
  }

  /** Whether the run holds its conversation now (a queued run admitted while its job was being delayed). */
  holds(ref: RunRef): Promise<boolean> {
    return this.admission.holds(ref);
  }

  /** Whether a parked run must wake: every call answered, or a cancel accepted (the wake sweep's check). */
  shouldWake(ref: RunRef): Promise<boolean> {
    return this.signals.shouldWake(ref);
  }

  /** How often a running attempt keeps its hold alive: ten times within the hold's life. */
  get heartbeatMs(): number {
    return (this.hold.options.markerTtlSeconds * 1000) / 10;
  }

  /** `handed_back`: the attempt gives the run back to the queue (shutdown, outage). */
  handBack(runId: string, attempt: number): Promise<void> {
    return reaching(this.points, WRITES.handBack, () => this.store.handBack(runId, attempt));
  }

  /**
   * A job that carries its run's row (StoredRun) but finds none: the web writes the row while it
   * adds the job, so it is usually a moment away. Waits for it (ROW_WAIT_MS at most); a run whose
   * stream is gone was given up by the web (its write failed): nothing to run. Still no row after
   * the wait: the row's asynchronous commit was lost with Postgres, and the worker writes it again.
   */
  private async awaitRow(stored: NewRun, bound: HistoryBound, claim: AttemptClaim): Promise<(LoadedRun & { claimed?: boolean }) | undefined> {
    const ref = { id: stored.runId, conversationId: stored.conversationId, userId: stored.userId };
    for (let waited = 0, delay = 2; waited < ROW_WAIT_MS; waited += delay, delay = Math.min(delay * 2, 200)) {
      await sleep(delay);
      const loaded = await this.store.load(ref.id, bound, claim);
      if (loaded) return loaded;
      if (!(await this.events.streamExists(ref))) return undefined;
    }
    this.logger.warn({ run_id: ref.id }, 'a run job names a run Postgres does not have (its asynchronous commit was lost); writing its row again from the job');
    await this.store.recreate(stored);
    return this.store.load(ref.id, bound, claim);
  }
}
