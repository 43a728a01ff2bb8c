import type { Queue } from 'bullmq';
import type { Knex } from 'knex';
import type { Logger } from '../../src/logger.js';
import type { RunRef } from '../../src/engine/worker-engine.js';
import { wakeRunJob, type RunJob } from '../../src/shared/jobs.js';
import { PARKED_RUN_STATUSES } from '../../src/shared/run-statuses.js';
import type { SweepCursor } from '../../src/db/sweep-cursor.js';
import { runRows, startRunSweep, SWEEP_BATCH, type RunSweep } from './run-sweep.js';

const parked = (knex: Knex) => knex('runs').whereIn('status', PARKED_RUN_STATUSES);

/** Parked runs in id order, a batch at a time: bounded by the partial index of active runs (runs_active), not by all runs. */
export function parkedRuns(knex: Knex, cursor?: SweepCursor) {
  return runRows(parked(knex), cursor);
}

/** The one rule of whether a parked run must wake (WorkerEngine.shouldWake). */
export interface WakeRule {
  shouldWake(run: RunRef): Promise<boolean>;
}

/** `sweep()` says how many parked runs it looked at. */
export type WakeSweep = RunSweep;

/**
 * The safety net of parking (DESIGN §11): a worker that died between delaying a run's job and
 * checking its decisions would leave it asleep until its deadline. Every worker looks, now and
 * then, for parked runs (approvals or client tool outputs) whose calls are all answered (or that were cancelled) and wakes them.
 */
export function startWakeSweep(knex: Knex, rule: WakeRule, queue: Queue<RunJob>, logger: Logger, { batch = SWEEP_BATCH } = {}): WakeSweep {
  const wakeIfDue = async (run: RunRef) => {
    if (await rule.shouldWake(run)) await wakeRunJob(queue, run.id);
    return true;
  };
  return startRunSweep(() => parked(knex), wakeIfDue, logger, { what: 'sweep for parked runs', batch });
}
