import type { Knex } from 'knex';
import type { Models, Run, RunMode, User } from '../db/models.js';
import type { Schedule, SkipReason } from '../db/schedule-models.js';
import { findOwned, listOwned } from '../db/owned.js';
import { paginate, type Page } from '../db/pagination.js';
import type { Pagination } from '../shared/pages.js';
import { NotFoundError } from '../shared/errors.js';
import type { Timing } from './timing.js';
import { presentSchedule } from './records.js';
import { presentRun, type RunRecord } from '../engine/run-records.js';

/** The `next_run_at` to write: none when the next tick is not known. */
const nextRunAt = (next: Date | null | undefined) => (next === undefined ? {} : { next_run_at: next });

/** A schedule's own fields, as a client sets them. */
export interface ScheduleFields extends Timing {
  name: string;
  agent_id: string | null;
  mode: RunMode;
  q: string;
  conversation_id: string | null;
  user_metadata: string | null;
  enabled: boolean;
}

/** A tick a worker took: the schedule and its owner (whose state and budget decide the run). */
export interface TakenTick {
  schedule: Schedule;
  owner: Pick<User, 'id' | 'is_active' | 'token_budget'>;
}

/** The schedules table (DESIGN §19): the web's CRUD and the workers' tick bookkeeping. */
export class ScheduleStore {
  constructor(
    private readonly knex: Knex,
    private readonly models: Models,
  ) {}

  /**
   * Inserts the schedule unless its user already has `limit`: the count runs under a per-user
   * transaction lock, so creates racing at the limit pass one at a time. Undefined when at the limit.
   */
  create(userId: string, fields: ScheduleFields, limit: number): Promise<Schedule | undefined> {
    return this.knex.transaction(async (trx) => {
      await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`schedules:${userId}`]);
      const count = await this.models.Schedule.query(trx).where({ user_id: userId }).resultSize();
      if (count >= limit) return undefined;
      return this.models.Schedule.query(trx).insertAndFetch({ ...fields, user_id: userId });
    });
  }

  own(userId: string, id: string): Promise<Schedule> {
    return findOwned(this.models.Schedule, userId, id, 'Schedule');
  }

  list(userId: string, page: Pagination) {
    return listOwned(this.models.Schedule, userId, page, presentSchedule);
  }

  /**
   * `work` on the user's schedule, locked (FOR UPDATE) in a transaction that commits after it, so
   * changes to one schedule and to its timer happen one after another. 404 for another user's.
   */
  locked<T>(userId: string, id: string, work: (schedule: Schedule, trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return this.knex.transaction(async (trx) => {
      const schedule = await this.models.Schedule.query(trx).findOne({ id, user_id: userId }).forUpdate();
      if (!schedule) throw new NotFoundError('Schedule not found', 'Schedule');
      return work(schedule, trx);
    });
  }

  async patch(id: string, changes: Partial<ScheduleFields> & { next_run_at?: Date | null }, trx?: Knex.Transaction): Promise<Schedule> {
    return this.models.Schedule.query(trx).patchAndFetchById(id, { ...changes, updated_at: new Date() });
  }

  /** `next` undefined: not known, left as it was. */
  async setNext(id: string, next: Date | null | undefined): Promise<void> {
    if (next !== undefined) await this.knex('schedules').where({ id }).update({ next_run_at: next });
  }

  /** A new schedule's first tick, unless a worker took a tick already (and recorded the one after). */
  async setFirstNext(id: string, next: Date | null): Promise<void> {
    await this.knex('schedules').where({ id }).whereNull('last_tick_at').update({ next_run_at: next });
  }

  async remove(id: string, trx?: Knex.Transaction): Promise<void> {
    await this.models.Schedule.query(trx).deleteById(id);
  }

  /** The schedule's runs, newest first (its own index). */
  runs(userId: string, id: string, page: Pagination): Promise<Page<RunRecord>> {
    const query = this.models.Run.query().where({ schedule_id: id, user_id: userId }).orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]);
    return paginate(query, page, presentRun);
  }

  /**
   * Takes the tick planned for `plannedAt` of an enabled schedule: once only (a later or repeated
   * take of the same instant finds nothing). Undefined when the schedule is gone, disabled, or the tick taken.
   */
  async takeTick(id: string, plannedAt: Date): Promise<TakenTick | undefined> {
    const { rows } = await this.knex.raw(
      `update schedules s set last_tick_at = ?
       from users u
       where s.id = ? and u.id = s.user_id and s.enabled and (s.last_tick_at is null or s.last_tick_at < ?)
       returning s.*, u.is_active as owner_is_active, u.token_budget as owner_token_budget`,
      [plannedAt, id, plannedAt],
    );
    if (!rows[0]) return undefined;
    const { owner_is_active: isActive, owner_token_budget: tokenBudget, ...schedule } = rows[0];
    return { schedule: this.models.Schedule.fromDatabaseJson(schedule), owner: { id: schedule.user_id, is_active: isActive, token_budget: tokenBudget } };
  }

  /** Whether a schedule that took no tick still wants its timer: false when it is gone or disabled. */
  async wantsTimer(id: string): Promise<boolean> {
    const row = await this.knex('schedules').where({ id }).first('enabled');
    return row?.enabled === true;
  }

  /** A run started by the schedule (a tick or a trigger); the next tick when one is known. */
  async recordRun(id: string, runId: string, next?: Date | null): Promise<void> {
    await this.knex('schedules')
      .where({ id })
      .update({ last_run_at: new Date(), last_run_id: runId, ...nextRunAt(next) });
  }

  async recordSkip(id: string, reason: SkipReason, next: Date | null | undefined): Promise<void> {
    await this.knex('schedules')
      .where({ id })
      .update({ skipped_runs: this.knex.raw('skipped_runs + 1'), last_skip_reason: reason, ...nextRunAt(next) });
  }

  /** The schedule can never run again as it is (its agent or conversation is gone): it is switched off. */
  async disable(id: string, reason: SkipReason): Promise<void> {
    await this.knex('schedules')
      .where({ id })
      .update({ enabled: false, next_run_at: null, skipped_runs: this.knex.raw('skipped_runs + 1'), last_skip_reason: reason, updated_at: new Date() });
  }

  /** Its agent was deleted (DESIGN §20): the agent's enabled schedules are switched off, in the deletion's transaction. Their ids. */
  async disableForAgent(agentId: string, trx: Knex.Transaction): Promise<string[]> {
    const rows: { id: string }[] = await trx('schedules')
      .where({ agent_id: agentId, enabled: true })
      .update({ enabled: false, next_run_at: null, last_skip_reason: 'agent_deleted' satisfies SkipReason, updated_at: new Date() })
      .returning('id');
    return rows.map((row) => row.id);
  }

  countEnabled(): Promise<number> {
    return this.models.Schedule.query().where({ enabled: true }).resultSize();
  }

  /** Up to `size` enabled schedules' timings after `afterId`, by id. */
  enabledAfter(afterId: string, size: number): Promise<(Timing & { id: string })[]> {
    return this.knex('schedules').where('enabled', true).where('id', '>', afterId).orderBy('id').limit(size).select('id', 'cron', 'every_seconds', 'timezone');
  }

  /** Which of `ids` are enabled schedules. */
  async enabledAmong(ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows: { id: string }[] = await this.knex('schedules').whereIn('id', ids).where('enabled', true).select('id');
    return new Set(rows.map((row) => row.id));
  }
}
