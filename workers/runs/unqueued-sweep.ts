import type { Knex } from 'knex';
import type { Logger } from '../../src/logger.js';
import type { RunRef } from '../../src/engine/worker-engine.js';
import type { SweepCursor } from '../../src/db/sweep-cursor.js';
import { runRows, startRunSweep, SWEEP_BATCH, type RunSweep } from './run-sweep.js';

/** Far longer than a web takes between a run's row and its job: a run queued longer without a job was left so. */
export const UNQUEUED_AFTER_MS = 5 * 60_000;

const queuedBefore = (knex: Knex, beforeMs: number) => knex('runs').where('status', 'queued').where('created_at', '<', new Date(beforeMs));

/** Runs queued since before `beforeMs`, in id order, a batch at a time: bounded by the partial index of active runs (runs_active). */
export function longQueuedRuns(knex: Knex, beforeMs: number, cursor?: SweepCursor) {
  return runRows(queuedBefore(knex, beforeMs), cursor);
}

/** The engine's end of a run left queued without a job (WebEngine.abandonUnqueued). */
export interface Abandoner {
  abandonUnqueued(ref: RunRef): Promise<boolean>;
}

/** `sweep()` says how many runs it ended. */
export type UnqueuedSweep = RunSweep;

/**
 * The safety net of starting a run (DESIGN §28): a web that died after a run's row and before its
 * job, or while undoing a job the queue refused, leaves the run queued with nothing to run it.
 * Every worker looks, now and then, for runs queued longer than `afterMs` whose job is missing and
 * ends them as the web would have (`enqueue_failed`).
 */
export function startUnqueuedSweep(knex: Knex, engine: Abandoner, logger: Logger, { batch = SWEEP_BATCH, afterMs = UNQUEUED_AFTER_MS } = {}): UnqueuedSweep {
  const reportEnded = (ended: number) => {
    if (ended > 0) logger.warn({ runs: ended }, 'runs left queued without a job ended as enqueue_failed');
  };
  return startRunSweep(() => queuedBefore(knex, Date.now() - afterMs), (run) => engine.abandonUnqueued(run), logger, { what: 'sweep for runs queued without a job', batch, onSwept: reportEnded });
}
