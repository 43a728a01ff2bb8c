import type { Knex } from 'knex';
import type { Models, Run } from '../db/models.js';
import type { Schedule } from '../db/schedule-models.js';
import { findOwned } from '../db/owned.js';
import { ConflictError, ValidationError } from '../shared/errors.js';
import type { BudgetRef } from '../budgets/ledger.js';
import type { Pagination } from '../shared/pages.js';
import type { RunService, StartRequest } from '../runs/service.js';
import type { TickScheduler } from './scheduler.js';
import type { ScheduleFields, ScheduleStore } from './store.js';
import { timingProblems, type Timing } from './timing.js';
import { presentSchedule } from './records.js';

/** A create as the route parsed it: `name` defaults to the start of `q`. */
export type NewSchedule = Omit<ScheduleFields, 'name'> & { name?: string };
export type ScheduleChanges = Partial<ScheduleFields>;

export interface ScheduleLimits {
  perUser: number;
  minIntervalSeconds: number;
}

/** Names a conversation gets from its question are this long; a schedule's default name too. */
const NAME_FROM_QUERY = 80;

/** The run a schedule starts: an ordinary background run that records its schedule. */
export const runRequestOf = (schedule: Schedule): StartRequest => ({
  userId: schedule.user_id,
  mode: schedule.mode,
  query: schedule.q,
  conversationId: schedule.conversation_id,
  agentId: schedule.agent_id,
  userMetadata: schedule.user_metadata,
  scheduleId: schedule.id,
});

const touchesTiming = (changes: ScheduleChanges) => changes.cron !== undefined || changes.every_seconds !== undefined || changes.timezone !== undefined;

/** A PATCH's timing: sending `cron` or `every_seconds` replaces the timing with the one sent. */
function mergedTiming(current: Schedule, changes: ScheduleChanges): Timing {
  const timezone = changes.timezone ?? current.timezone;
  if (changes.cron === undefined && changes.every_seconds === undefined) return { cron: current.cron, every_seconds: current.every_seconds, timezone };
  return { cron: changes.cron ?? null, every_seconds: changes.every_seconds ?? null, timezone };
}

/**
 * Schedules (DESIGN §19), the web's side: records in Postgres, timers in BullMQ's job schedulers
 * (registered when a schedule is enabled, removed when it is disabled or deleted), and a run now.
 */
export class ScheduleService {
  constructor(
    private readonly store: ScheduleStore,
    private readonly timers: TickScheduler,
    private readonly runs: Pick<RunService, 'start'>,
    private readonly models: Pick<Models, 'Agent' | 'Conversation'>,
    private readonly limits: ScheduleLimits,
  ) {}

  list(userId: string, page: Pagination) {
    return this.store.list(userId, page);
  }

  async get(userId: string, id: string) {
    return presentSchedule(await this.store.own(userId, id));
  }

  async create(userId: string, input: NewSchedule) {
    await this.checkReferences(userId, input);
    const schedule = await this.store.create(userId, { ...input, name: input.name ?? input.q.slice(0, NAME_FROM_QUERY) }, this.limits.perUser);
    if (!schedule) throw new ConflictError('schedule_limit', `You already have ${this.limits.perUser} schedules (SCHEDULES_PER_USER); delete one to add another`);
    if (!schedule.enabled) return presentSchedule(schedule);
    try {
      schedule.next_run_at = await this.timers.register(schedule.id, schedule);
    } catch (err) {
      await this.store.remove(schedule.id).catch(() => {});
      throw err;
    }
    await this.store.setFirstNext(schedule.id, schedule.next_run_at);
    return presentSchedule(schedule);
  }

  /** Changes the schedule and then its timer, under the schedule's row lock (so two PATCHes cannot cross). */
  async update(userId: string, id: string, changes: ScheduleChanges) {
    await this.checkReferences(userId, changes);
    const updated = await this.store.locked(userId, id, async (current, trx) => {
      const timing = mergedTiming(current, changes);
      if (touchesTiming(changes)) this.checkTiming(timing);
      const enabled = changes.enabled ?? current.enabled;
      // Switching on again checks what a tick would: an agent or conversation gone since is a 404 now, not a disabled schedule later.
      if (enabled && !current.enabled) await this.checkReferences(userId, { agent_id: current.agent_id, conversation_id: current.conversation_id, ...changes });
      const next = await this.retime(current, timing, enabled, touchesTiming(changes));
      return this.store.patch(id, { ...changes, ...timing, next_run_at: next }, trx);
    });
    return presentSchedule(updated);
  }

  async remove(userId: string, id: string): Promise<void> {
    await this.store.locked(userId, id, async (_schedule, trx) => {
      await this.store.remove(id, trx);
      // Before the delete commits: a timer that cannot be removed leaves the schedule as it was.
      await this.timers.unregister(id);
    });
  }

  /**
   * Its agent is being deleted (DESIGN §20): the agent's schedules are switched off in the deletion's
   * transaction, and their timers removed before it commits (a timer that cannot be removed leaves
   * the agent and its schedules as they were).
   */
  async disableForAgent(agentId: string, trx: Knex.Transaction): Promise<void> {
    const disabled = await this.store.disableForAgent(agentId, trx);
    await Promise.all(disabled.map((id) => this.timers.unregister(id)));
  }

  async runsOf(userId: string, id: string, page: Pagination) {
    await this.store.own(userId, id);
    return this.store.runs(userId, id, page);
  }

  /** A run now, apart from the timer (enabled or not), charged to the caller's budgets as any run it starts. */
  async trigger(userId: string, id: string, caller: { budgets: readonly BudgetRef[]; requestId?: string }): Promise<Run> {
    const schedule = await this.store.own(userId, id);
    const run = await this.runs.start({ ...runRequestOf(schedule), budgets: caller.budgets, requestId: caller.requestId });
    await this.store.recordRun(id, run.id);
    return run;
  }

  /** The timer after a change: registered anew when the timing changed or the schedule was switched on. */
  private async retime(current: Schedule, timing: Timing, enabled: boolean, timingChanged: boolean): Promise<Date | null> {
    if (!enabled) {
      if (current.enabled) await this.timers.unregister(current.id);
      return null;
    }
    if (timingChanged || !current.enabled) return this.timers.register(current.id, timing);
    return current.next_run_at;
  }

  private checkTiming(timing: Timing): void {
    const problems = timingProblems(timing, this.limits.minIntervalSeconds, new Date());
    if (problems.length === 0) return;
    throw new ValidationError(problems.map(({ field, message }) => ({ loc: ['body', field], msg: `Value error, ${message}`, type: 'value_error', input: timing[field] })));
  }

  /** The agent and conversation named must be the user's: 404 otherwise, as /api/react answers. */
  private async checkReferences(userId: string, references: { agent_id?: string | null; conversation_id?: string | null }): Promise<void> {
    await Promise.all([
      references.agent_id ? findOwned(this.models.Agent, userId, references.agent_id, 'Agent') : undefined,
      references.conversation_id ? findOwned(this.models.Conversation, userId, references.conversation_id, 'Conversation') : undefined,
    ]);
  }
}
