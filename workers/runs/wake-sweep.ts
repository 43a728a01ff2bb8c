import type { Queue } from 'bullmq';
import type { Knex } from 'knex';
import type { Logger } from '../../src/logger.js';
import type { RunRef } from '../../src/engine/worker-engine.js';
import { wakeRunJob, type RunJob } from '../../src/shared/jobs.js';
import { PARKED_RUN_STATUSES } from '../../src/shared/run-statuses.js';
import { SweepCursor } from '../../src/db/sweep-cursor.js';

const SWEEP_INTERVAL_MS = 30_000;
const SWEEP_BATCH = 500;

type ParkedRun = { id: string; conversation_id: string; user_id: string };

/** Parked runs in id order, a batch at a time: bounded by the partial index of active runs (runs_active), not by all runs. */
export function parkedRuns(knex: Knex, cursor = new SweepCursor(SWEEP_BATCH)): Promise<ParkedRun[]> {
  return cursor.next<ParkedRun>(knex('runs').select('id', 'conversation_id', 'user_id').whereIn('status', PARKED_RUN_STATUSES));
}

/** The one rule of whether a parked run must wake (WorkerEngine.shouldWake). */
export interface WakeRule {
  shouldWake(run: RunRef): Promise<boolean>;
}

export interface WakeSweep {
  /** Looks at the next batch of parked runs (after the last one looked at, from the first again after the last); how many. */
  sweep(): Promise<number>;
  close(): void;
}

/**
 * The safety net of parking (DESIGN §11): a worker that died between delaying a run's job and
 * checking its decisions would leave it asleep until its deadline. Every worker looks, now and
 * then, for parked runs (approvals or client tool outputs) whose calls are all answered (or that were cancelled) and wakes them.
 */
export function startWakeSweep(knex: Knex, rule: WakeRule, queue: Queue<RunJob>, logger: Logger, { batch = SWEEP_BATCH } = {}): WakeSweep {
  const cursor = new SweepCursor(batch);
  const sweep = async () => {
    const runs = await parkedRuns(knex, cursor);
    for (const run of runs) {
      if (await rule.shouldWake({ id: run.id, conversationId: run.conversation_id, userId: run.user_id })) await wakeRunJob(queue, run.id);
    }
    return runs.length;
  };
  const timer = setInterval(() => sweep().catch((err: unknown) => logger.warn({ err }, 'sweep for parked runs failed')), SWEEP_INTERVAL_MS);
  timer.unref();
  return { sweep, close: () => clearInterval(timer) };
}
