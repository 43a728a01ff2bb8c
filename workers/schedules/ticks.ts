import type { User } from '../../src/db/models.js';
import type { SkipReason } from '../../src/db/schedule-models.js';
import { budgetOf } from '../../src/limits/settings.js';
import type { RunService } from '../../src/runs/service.js';
import { runRequestOf } from '../../src/schedules/service.js';
import type { TickScheduler } from '../../src/schedules/scheduler.js';
import type { ScheduleStore } from '../../src/schedules/store.js';
import { ConflictError, NotFoundError, QuotaExceededError, RateLimitedError } from '../../src/shared/errors.js';

/** What one tick did, for its log line. */
export type TickOutcome =
  | { outcome: 'started'; run_id: string }
  | { outcome: 'skipped'; reason: SkipReason; err?: unknown }
  | { outcome: 'disabled'; reason: SkipReason }
  /** The owner is disabled (the schedule waits, its timer kept), or another worker took this tick. */
  | { outcome: 'idle'; reason: 'owner_disabled' | 'taken' }
  /** The schedule is gone or disabled: its timer is removed. */
  | { outcome: 'removed' };

/** Why starting the run refused it: a skipped tick, or (agent or conversation gone) a schedule that cannot run again. */
function skipReasonOf(err: unknown): SkipReason {
  if (err instanceof ConflictError && err.code === 'conversation_busy') return 'conversation_busy';
  if (err instanceof QuotaExceededError) return 'insufficient_quota';
  if (err instanceof RateLimitedError) return 'active_run_limit';
  if (err instanceof NotFoundError && err.resource === 'Agent') return 'agent_deleted';
  if (err instanceof NotFoundError && err.resource === 'Conversation') return 'conversation_deleted';
  return 'unavailable';
}

/** A promise's value or its error, without throwing. */
const settle = <T>(promise: Promise<T>): Promise<{ value: T } | { err: unknown }> => promise.then((value) => ({ value }), (err: unknown) => ({ err }));

const GONE: SkipReason[] = ['agent_deleted', 'conversation_deleted'];

/** A scheduled run is charged to its owner's token budget (DESIGN §18): there is no key. */
const ownerBudgets = (owner: Pick<User, 'id' | 'token_budget'>) => {
  const budget = budgetOf('user', owner as User);
  return budget ? [budget] : [];
};

/**
 * One tick of a schedule (DESIGN §19): taken once in Postgres (however many workers BullMQ hands
 * it to), then an ordinary background run through RunService, as the web starts them. A tick that
 * cannot start its run is counted and skipped; it never fails (a failed tick is not retried).
 */
export class TickProcessor {
  constructor(
    private readonly store: ScheduleStore,
    private readonly timers: TickScheduler,
    private readonly runs: Pick<RunService, 'start'>,
  ) {}

  async process(scheduleId: string, plannedAt: Date): Promise<TickOutcome> {
    const taken = await this.store.takeTick(scheduleId, plannedAt);
    if (!taken) return this.untaken(scheduleId);
    const { schedule, owner } = taken;
    // BullMQ planned the next tick when this one was taken from the queue; unknown (undefined) if Redis cannot say.
    const next = this.timers.nextTick(scheduleId).catch(() => undefined);
    if (!owner.is_active) {
      await this.store.setNext(scheduleId, await next);
      return { outcome: 'idle', reason: 'owner_disabled' };
    }
    const requestId = `${scheduleId}.${plannedAt.getTime()}`;
    const [started, nextAt] = await Promise.all([settle(this.runs.start({ ...runRequestOf(schedule), budgets: ownerBudgets(owner), requestId })), next]);
    if ('err' in started) return this.skip(scheduleId, skipReasonOf(started.err), nextAt, started.err);
    await this.store.recordRun(scheduleId, started.value.id, nextAt);
    return { outcome: 'started', run_id: started.value.id };
  }

  private async skip(scheduleId: string, reason: SkipReason, next: Date | null | undefined, err: unknown): Promise<TickOutcome> {
    if (GONE.includes(reason)) {
      await this.store.disable(scheduleId, reason);
      await this.timers.unregister(scheduleId);
      return { outcome: 'disabled', reason };
    }
    await this.store.recordSkip(scheduleId, reason, next);
    return { outcome: 'skipped', reason, ...(reason === 'unavailable' ? { err } : {}) };
  }

  /** No tick to take: another worker took it, or the schedule is gone or off (and its timer should be too). */
  private async untaken(scheduleId: string): Promise<TickOutcome> {
    if (await this.store.wantsTimer(scheduleId)) return { outcome: 'idle', reason: 'taken' };
    await this.timers.unregister(scheduleId);
    return { outcome: 'removed' };
  }
}
