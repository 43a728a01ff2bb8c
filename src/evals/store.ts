import type { Knex } from 'knex';
import type { RunMode } from '../shared/run-statuses.js';
import type { BudgetRef } from '../shared/budget-terms.js';
import type { Scorer } from './scorers.js';
import { scorerName } from './scorers.js';
import type { EvalRecord, EvalStatus } from './records.js';

/** An eval's row as its driver and the API read it. */
export interface EvalRow {
  id: string;
  user_id: string;
  dataset_id: string;
  agent_id: string;
  agent_version: number;
  mode: RunMode;
  scorers: Scorer[];
  concurrency: number;
  status: EvalStatus;
  total: number;
  done: number;
  failed_items: number;
  passed_items: number;
  score_sums: Record<string, number>;
  error: { code: string; message: string } | null;
  budgets: BudgetRef[];
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

/** An item taken by a driver: its run's id is on the row before the run starts. */
export interface TakenItem {
  id: string;
  item_id: string;
  run_id: string;
  input: { q: string; image_ids?: string[] };
  expected: unknown;
}

/** What became of one item: scored from its run's answer, or failed (its run failed or could not start; every score 0). */
export interface ItemOutcome {
  status: 'scored' | 'failed';
  output: string | null;
  scores: Record<string, number>;
  passed: boolean;
  error: { code: string; message: string } | null;
}

export const EVAL_COLUMNS = ['id', 'user_id', 'dataset_id', 'agent_id', 'agent_version', 'mode', 'scorers', 'concurrency', 'status', 'total', 'done', 'failed_items', 'passed_items', 'score_sums', 'error', 'budgets', 'created_at', 'started_at', 'finished_at'];

const mean = (sum: number | undefined, done: number) => (done > 0 && sum !== undefined ? Math.round((sum / done) * 1e6) / 1e6 : null);

export function presentEval(row: EvalRow): EvalRecord {
  return {
    id: row.id,
    dataset_id: row.dataset_id,
    agent_id: row.agent_id,
    agent_version: row.agent_version,
    mode: row.mode,
    scorers: row.scorers,
    concurrency: row.concurrency,
    status: row.status,
    progress: { done: row.done, failed: row.failed_items, total: row.total },
    summary: Object.fromEntries(row.scorers.map((s) => [scorerName(s), mean(row.score_sums[scorerName(s)], row.done)])),
    pass_rate: mean(row.passed_items, row.done),
    error: row.error,
    created_at: row.created_at.toISOString(),
    started_at: row.started_at?.toISOString() ?? null,
    finished_at: row.finished_at?.toISOString() ?? null,
  };
}

/** The webhook body of an eval's end (DESIGN §24), beside runs' (DESIGN §10). */
export function evalEventPayload(event: 'eval.succeeded' | 'eval.failed', row: EvalRow, at = new Date()) {
  const record = presentEval(row);
  return {
    type: event,
    timestamp: at.toISOString(),
    data: { eval_id: row.id, dataset_id: row.dataset_id, agent_id: row.agent_id, agent_version: row.agent_version, status: record.status, progress: record.progress, summary: record.summary, pass_rate: record.pass_rate, error: row.error },
  };
}

/**
 * The statements of an eval's life (DESIGN §24), each one bounded by the eval's id. The driver
 * takes items under the eval's row lock, so at most `concurrency` of them run at once whatever
 * drives it, and finishes one only from `running`, so none is counted twice. That lock is FOR NO
 * KEY UPDATE: each run written with `eval_id` checks its foreign key with FOR KEY SHARE on the same
 * row, which FOR UPDATE would conflict with (a take and a run's insert deadlocked).
 */
export class EvalStore {
  constructor(private readonly knex: Knex) {}

  async get(evalId: string): Promise<EvalRow | undefined> {
    return this.knex('evals').where({ id: evalId }).first(EVAL_COLUMNS);
  }

  /** queued → running; the row as it is now, or undefined once it is final (nothing left to drive). */
  async begin(evalId: string): Promise<EvalRow | undefined> {
    const [row] = await this.knex('evals')
      .where({ id: evalId })
      .whereIn('status', ['queued', 'running'])
      .update({ status: 'running', started_at: this.knex.raw('coalesce(started_at, now())') })
      .returning(EVAL_COLUMNS);
    return row;
  }

  /** Items a driver that died left running: their runs carry on, and whoever drives the eval now follows them. */
  async runningItems(evalId: string): Promise<TakenItem[]> {
    return this.knex('eval_items').where({ eval_id: evalId, status: 'running' }).orderBy('position').select('id', 'item_id', 'run_id', 'input', 'expected');
  }

  /** The next pending item, marked running with its run's id, if the eval runs and fewer than `concurrency` of its items do. */
  async take(evalId: string): Promise<TakenItem | undefined> {
    const { rows } = await this.knex.raw(
      `with e as (
         select id, concurrency from evals where id = ? and status = 'running' for no key update
       ), next as (
         select i.id from eval_items i, e
         where i.eval_id = e.id and i.status = 'pending'
           and (select count(*) from eval_items r where r.eval_id = e.id and r.status = 'running') < e.concurrency
         order by i.position limit 1
         for update of i skip locked
       )
       update eval_items t set status = 'running', run_id = gen_random_uuid(), started_at = now()
       from next where t.id = next.id
       returning t.id, t.item_id, t.run_id, t.input, t.expected`,
      [evalId],
    );
    return rows[0];
  }

  /** Whether any item is still to run or running. */
  async hasOpenItems(evalId: string): Promise<boolean> {
    const row = await this.knex('eval_items').where({ eval_id: evalId }).whereIn('status', ['pending', 'running']).first('id');
    return row !== undefined;
  }

  /**
   * The item's outcome, once: only from `running`, and its eval's counters move in the same
   * statement. A cancelled eval keeps the outcome of an item whose run ended anyway. Whether it was recorded now.
   */
  async finishItem(evalId: string, itemId: string, outcome: ItemOutcome): Promise<boolean> {
    const { rows } = await this.knex.raw(
      `with item as (
         update eval_items set status = ?, output = ?, scores = ?::jsonb, passed = ?, error = ?::jsonb, finished_at = now()
         where id = ? and eval_id = ? and status = 'running' returning id
       ), counted as (
         update evals e set done = done + 1, failed_items = failed_items + ?, passed_items = passed_items + ?,
           score_sums = (select coalesce(jsonb_object_agg(k, coalesce((e.score_sums->>k)::float8, 0) + coalesce((?::jsonb->>k)::float8, 0)), '{}')
                         from (select jsonb_object_keys(e.score_sums || ?::jsonb) as k) keys)
         where e.id = ? and exists (select 1 from item) returning e.id
       )
       select (select count(*) from item)::int as finished`,
      [outcome.status, outcome.output, JSON.stringify(outcome.scores), outcome.passed, outcome.error ? JSON.stringify(outcome.error) : null, itemId, evalId,
        outcome.status === 'failed' ? 1 : 0, outcome.passed ? 1 : 0, JSON.stringify(outcome.scores), JSON.stringify(outcome.scores), evalId],
    );
    return rows[0].finished === 1;
  }

  /** A run that ended cancelled (the eval's cancel reached it): the item is cancelled, not scored. */
  async cancelItem(evalId: string, itemId: string): Promise<void> {
    await this.knex('eval_items').where({ id: itemId, eval_id: evalId, status: 'running' }).update({ status: 'cancelled', finished_at: this.knex.fn.now() });
  }

  /**
   * The eval's end once no item is open: succeeded when some item was answered, failed when every
   * run failed; its webhook deliveries in the same statement (an outbox, as runs'). The delivery ids.
   */
  async finish(evalId: string): Promise<{ row: EvalRow; deliveries: string[] } | undefined> {
    return this.end(evalId, (row) => (row.done > row.failed_items || row.total === 0 ? { status: 'succeeded' } : { status: 'failed', error: { code: 'all_items_failed', message: 'Every item of the eval failed to run' } }));
  }

  /** The eval fails (its agent is gone, a budget is spent…): its pending items are cancelled. */
  async fail(evalId: string, error: { code: string; message: string }): Promise<{ row: EvalRow; deliveries: string[] } | undefined> {
    return this.end(evalId, () => ({ status: 'failed', error }), true);
  }

  private async end(evalId: string, verdict: (row: EvalRow) => { status: 'succeeded' | 'failed'; error?: { code: string; message: string } }, dropPending = false) {
    return this.knex.transaction(async (trx) => {
      const current: EvalRow | undefined = await trx('evals').where({ id: evalId, status: 'running' }).forNoKeyUpdate().first(EVAL_COLUMNS);
      if (!current) return undefined;
      if (dropPending) await trx('eval_items').where({ eval_id: evalId, status: 'pending' }).update({ status: 'cancelled', finished_at: trx.fn.now() });
      else if (await trx('eval_items').where({ eval_id: evalId }).whereIn('status', ['pending', 'running']).first('id')) return undefined;
      const { status, error } = verdict(current);
      const [row]: EvalRow[] = await trx('evals').where({ id: evalId }).update({ status, error: error ? JSON.stringify(error) : null, finished_at: trx.fn.now() }).returning(EVAL_COLUMNS);
      const payload = evalEventPayload(status === 'succeeded' ? 'eval.succeeded' : 'eval.failed', row!);
      const { rows } = await trx.raw(
        `insert into webhook_deliveries (id, endpoint_id, eval_id, event, payload)
         select gen_random_uuid(), e.id, ?, ?, ?::jsonb from webhook_endpoints e
         where e.user_id = ? and e.is_active and e.events @> ?::jsonb
         returning id`,
        [evalId, payload.type, JSON.stringify(payload), row!.user_id, JSON.stringify([payload.type])],
      );
      return { row: row!, deliveries: rows.map((r: { id: string }) => r.id) };
    });
  }

  /** The run of an item as the scorers read it. */
  async runOutcome(runId: string): Promise<RunOutcomeRow | undefined> {
    const { rows } = await this.knex.raw(
      `select r.id, r.conversation_id, r.user_id, r.status, r.answer, r.output, r.error,
         (select m.citations from messages m where m.run_id = r.id and m.role = 'assistant' order by m.seq desc limit 1) as citations
       from runs r where r.id = ?`,
      [runId],
    );
    return rows[0];
  }
}

export interface RunOutcomeRow {
  id: string;
  conversation_id: string;
  user_id: string;
  status: string;
  answer: string | null;
  output: unknown;
  error: { code: string; message: string } | null;
  citations: unknown[] | null;
}
