import type { Knex } from 'knex';
import type { Logger } from '../../src/logger.js';
import type { RunRef } from '../../src/engine/worker-engine.js';
import { SweepCursor } from '../../src/db/sweep-cursor.js';

const SWEEP_INTERVAL_MS = 30_000;
export const SWEEP_BATCH = 500;

type RunRow = { id: string; conversation_id: string; user_id: string };

/** A sweep of runs that looks at the next batch of its rows every interval; `sweep()` looks at once. */
export interface RunSweep {
  /** Looks at the next batch (after the last run looked at, from the first again after the last); the count `visit` reports. */
  sweep(): Promise<number>;
  close(): void;
}

/** Rows of `runs` a sweep selects, in id order a batch at a time (the caller's query bounds them by an index). */
export function runRows(query: Knex.QueryBuilder, cursor = new SweepCursor(SWEEP_BATCH)): Promise<RunRow[]> {
  return cursor.next<RunRow>(query.select('id', 'conversation_id', 'user_id'));
}

/**
 * Every worker's safety nets (the wake sweep, the unqueued sweep): `select` names the runs, `visit`
 * acts on each and says whether it counted; a failed sweep is logged as `what` and tried at the next tick.
 */
export function startRunSweep(
  select: () => Knex.QueryBuilder,
  visit: (run: RunRef) => Promise<boolean>,
  logger: Logger,
  { what, batch = SWEEP_BATCH, onSwept }: { what: string; batch?: number; onSwept?: (counted: number) => void },
): RunSweep {
  const cursor = new SweepCursor(batch);
  const sweep = async () => {
    let counted = 0;
    for (const row of await runRows(select(), cursor)) {
      if (await visit({ id: row.id, conversationId: row.conversation_id, userId: row.user_id })) counted++;
    }
    onSwept?.(counted);
    return counted;
  };
  const timer = setInterval(() => sweep().catch((err: unknown) => logger.warn({ err }, `${what} failed`)), SWEEP_INTERVAL_MS);
  timer.unref();
  return { sweep, close: () => clearInterval(timer) };
}
