import type { Knex } from 'knex';
import type { Models, Run, RunMode, RunStatus } from '../db/models.js';
import { paginate, pageOf } from '../db/pagination.js';
import type { Pagination } from '../http/validation.js';
import { NotFoundError } from '../shared/errors.js';
import { presentRun } from '../engine/run-records.js';
import { presentAdminRun } from './records.js';

export interface RunFilters {
  status?: RunStatus;
  user_id?: string;
  mode?: RunMode;
  from?: Date;
  to?: Date;
  /** DESIGN §24: the runs of one eval (runs_eval). */
  eval_id?: string;
}

export interface UsageQuery {
  from: Date;
  to: Date;
  user_id?: string;
  group_by: 'user' | 'day';
}

const DAY_MS = 24 * 3600 * 1000;
const startOfDay = (at: Date) => new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);
const nextStartOfDay = (at: Date) => new Date(Math.ceil(at.getTime() / DAY_MS) * DAY_MS);
const isoDay = (at: Date) => at.toISOString().slice(0, 10);

/** The columns an administrator sees of a run: the client's view plus its owner (never the checkpoint). */
const RUN_COLUMNS = ['id', 'user_id', 'conversation_id', 'agent_id', 'mode', 'status', 'query', 'answer', 'finish_reason', 'error', 'usage', 'cost', 'user_metadata', 'trace_id', 'schedule_id', 'eval_id', 'agent_version', 'created_at', 'started_at', 'finished_at'];

/** The token and outcome counts of one row of parts: a usage_daily row, or one run. */
const PART_COUNTS = `runs, succeeded, failed, cancelled, prompt_tokens, completion_tokens, reasoning_tokens`;
const RUN_AS_PART = `1, (status = 'succeeded')::int, (status = 'failed')::int, (status = 'cancelled')::int, prompt_tokens, completion_tokens, reasoning_tokens`;
/** The known costs of a row of parts and how many runs had one (DESIGN §18): a row's cost is null when none had. */
const PART_COST = `cost, priced_runs`;
const RUN_COST_AS_PART = `coalesce(cost, 0), (cost is not null)::int`;

/**
 * Runs across users, and usage: for administrators (DESIGN §9). Both are bounded by indexes made
 * for them (migration 009): the list walks runs by time or status; usage sums whole UTC days from
 * the `usage_daily` rollup and only the partial days at the window's edges from `runs`.
 */
const adminView = (run: Run) => presentAdminRun(presentRun(run), run.user_id, (run as Run & { agent_deleted?: boolean }).agent_deleted === true);

export class RunReports {
  constructor(
    private readonly knex: Knex,
    private readonly models: Models,
  ) {}

  /** Runs as administrators see them: with their user and whether their agent was deleted since (DESIGN §20: its runs name it still). */
  private adminRuns() {
    const agentDeleted = this.knex.raw('exists (select 1 from agents a where a.id = runs.agent_id and a.deleted_at is not null) as agent_deleted');
    return this.models.Run.query().select([...RUN_COLUMNS, agentDeleted]);
  }

  /** Any user's run (its page in the console). */
  async one(runId: string) {
    const run = await this.adminRuns().findById(runId);
    if (!run) throw new NotFoundError('Run not found');
    return adminView(run);
  }

  /** Newest first. */
  list(filters: RunFilters, page: Pagination) {
    const query = this.adminRuns().orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]);
    if (filters.status) query.where('status', filters.status);
    if (filters.user_id) query.where('user_id', filters.user_id);
    if (filters.mode) query.where('mode', filters.mode);
    if (filters.eval_id) query.where('eval_id', filters.eval_id);
    if (filters.from) query.where('created_at', '>=', filters.from);
    if (filters.to) query.where('created_at', '<', filters.to);
    return paginate(query, page, adminView);
  }

  /** Runs, outcomes, tokens and cost (null where no run had a price) in [from, to), per user or per UTC day, ordered by key. */
  async usage(request: UsageQuery, pagination: Pagination) {
    const { from, to } = request;
    const fullFrom = nextStartOfDay(from);
    const fullTo = startOfDay(to);
    const parts: string[] = [];
    const bindings: Knex.Value[] = [];
    const forUser = request.user_id ? ' and user_id = ?' : '';
    const runsBetween = (start: Date, end: Date) => {
      parts.push(`select (created_at at time zone 'UTC')::date as day, user_id, ${RUN_AS_PART}, ${RUN_COST_AS_PART} from runs where created_at >= ? and created_at < ?${forUser}`);
      bindings.push(start, end, ...(request.user_id ? [request.user_id] : []));
    };
    if (fullFrom < fullTo) {
      parts.push(`select day, user_id, ${PART_COUNTS}, ${PART_COST} from usage_daily where day >= ?::date and day < ?::date${forUser}`);
      bindings.push(isoDay(fullFrom), isoDay(fullTo), ...(request.user_id ? [request.user_id] : []));
      if (from < fullFrom) runsBetween(from, fullFrom);
      if (fullTo < to) runsBetween(fullTo, to);
    } else {
      runsBetween(from, to);
    }
    const key = request.group_by === 'day' ? `to_char(day, 'YYYY-MM-DD')` : 'user_id::text';
    const sums = PART_COUNTS.split(', ').map((name) => `sum(${name}) as ${name}`).join(', ');
    const { rows } = await this.knex.raw(
      // Columns named here: a window holding no whole UTC day has only a runs part, whose columns have no names of their own.
      `with parts (day, user_id, ${PART_COUNTS}, ${PART_COST}) as (${parts.join(' union all ')}),
            grouped as (select ${key} as key, ${sums}, case when sum(priced_runs) > 0 then sum(cost) end as cost from parts group by 1)
       select (select count(*) from grouped) as total,
              coalesce((select json_agg(g order by g.key) from (select * from grouped order by key limit ? offset ?) g), '[]') as items`,
      [...bindings, pagination.size, (pagination.page - 1) * pagination.size],
    );
    const { total, items } = rows[0] as { total: string; items: Record<string, string | number | null>[] };
    const numbers = (row: Record<string, string | number | null>) =>
      Object.fromEntries(Object.entries(row).map(([name, value]) => [name, name === 'key' || value === null ? value : Number(value)]));
    return {
      ...pageOf(items.map(numbers), Number(total), pagination),
      from: from.toISOString(),
      to: to.toISOString(),
      group_by: request.group_by,
    };
  }
}
