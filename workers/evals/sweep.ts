import type { Queue } from 'bullmq';
import type { Knex } from 'knex';
import { evalJobOptions, type EvalJob } from '../../src/shared/jobs.js';
import { SweepCursor } from '../../src/db/sweep-cursor.js';

const SWEEP_BATCH = 1000;

/**
 * Queues again the active evals whose driver job is gone (lost with Redis, or never queued), a
 * batch at a time: each call the next batch after the last, from the first again after the last.
 * Returns a sweep that answers how many evals it looked at.
 */
export function evalSweep(knex: Knex, evalQueue: Queue<EvalJob>, { batch = SWEEP_BATCH } = {}): () => Promise<number> {
  const cursor = new SweepCursor(batch);
  return async () => {
    const active = await cursor.next<{ id: string }>(knex('evals').whereIn('status', ['queued', 'running']).select('id'));
    // The job id is the eval's: an eval whose job is there (waiting, driven, delayed) is not queued twice.
    await evalQueue.addBulk(active.map(({ id }) => ({ name: 'drive', data: { evalId: id }, opts: { ...evalJobOptions, jobId: id } })));
    return active.length;
  };
}
