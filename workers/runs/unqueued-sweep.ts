import type { Knex } from 'knex';
import type { Logger } from '../../src/logger.js';
import type { RunRef } from '../../src/engine/worker-engine.js';
import { SweepCursor } from '../../src/db/sweep-cursor.js';

const SWEEP_INTERVAL_MS = 30_000;
const SWEEP_BATCH = 500;
/** Far longer than a web takes between a run's row and its job: a run queued longer without a job was left so. */
export const UNQUEUED_AFTER_MS = 5 * 60_000;

type QueuedRun = { id: string; conversation_id: string; user_id: string };

/** Runs queued since before `beforeMs`, in id order, a batch at a time: bounded by the partial index of active runs (runs_active). */
export function longQueuedRuns(knex: Knex, beforeMs: number, cursor = new SweepCursor(SWEEP_BATCH)): Promise<QueuedRun[]> {
  return cursor.next<QueuedRun>(knex('runs').select('id', 'conversation_id', 'user_id').where('status', 'queued').where('created_at', '<', new Date(beforeMs)));
}

/** The engine's end of a run left queued without a job (WebEngine.abandonUnqueued). */
export interface Abandoner {
  abandonUnqueued(ref: RunRef): Promise<boolean>;
}

export interface UnqueuedSweep {
  /** Looks at the next batch of long-queued runs; how many it ended. */
  sweep(): Promise<number>;
  close(): void;
}

/**
 * The safety net of starting a run (DESIGN §28): a web that died after a run's row and before its
 * job, or while undoing a job the queue refused, leaves the run queued with nothing to run it.
 * Every worker looks, now and then, for runs queued longer than `afterMs` whose job is missing and
 * ends them as the web would have (`enqueue_failed`).
 */
export function startUnqueuedSweep(knex: Knex, engine: Abandoner, logger: Logger, { batch = SWEEP_BATCH, afterMs = UNQUEUED_AFTER_MS } = {}): UnqueuedSweep {
  const cursor = new SweepCursor(batch);
  const sweep = async () => {
    let ended = 0;
    for (const run of await longQueuedRuns(knex, Date.now() - afterMs, cursor)) {
      if (await engine.abandonUnqueued({ id: run.id, conversationId: run.conversation_id, userId: run.user_id })) ended++;
    }
    if (ended > 0) logger.warn({ runs: ended }, 'runs left queued without a job ended as enqueue_failed');
    return ended;
  };
  const timer = setInterval(() => sweep().catch((err: unknown) => logger.warn({ err }, 'sweep for runs queued without a job failed')), SWEEP_INTERVAL_MS);
  timer.unref();
  return { sweep, close: () => clearInterval(timer) };
}
