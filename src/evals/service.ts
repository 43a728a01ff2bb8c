import type { Knex } from 'knex';
import type { Queue } from 'bullmq';
import { ConflictError, NotFoundError, RateLimitedError, ValidationError } from '../shared/errors.js';
import { pageOf, type Page, type Pagination } from '../shared/pages.js';
import type { RunMode } from '../shared/run-statuses.js';
import type { BudgetRef } from '../shared/budget-terms.js';
import { evalJobOptions, type EvalJob } from '../shared/jobs.js';
import { LOCAL_MODEL } from '../shared/model-settings.js';
import { scorerName, type Scorer } from './scorers.js';
import { EVAL_COLUMNS, presentEval, type EvalRow } from './store.js';
import type { EvalComparison, EvalRecord, EvalResult } from './records.js';

export interface NewEval {
  dataset_id: string;
  agent_id: string;
  agent_version?: number;
  mode: RunMode;
  scorers: Scorer[];
  concurrency: number;
}

/** How long a caller over the active-eval bound is asked to wait. */
const ACTIVE_LIMIT_RETRY_SECONDS = 30;

const invalid = (field: string, msg: string, input: unknown) => new ValidationError([{ loc: ['body', field], msg: `Value error, ${msg}`, type: 'value_error', input }]);

/**
 * Evals as the API sees them (DESIGN §24): created with a copy of their dataset's items and one
 * driver job on the eval queue (workers/evals), read with their progress and results, cancelled,
 * compared. Another user's eval, dataset or agent answers 404.
 */
export class EvalService {
  constructor(
    private readonly knex: Knex,
    private readonly queue: Queue<EvalJob>,
    private readonly cancelRun: (userId: string, runId: string) => Promise<unknown>,
    private readonly options: { activePerUser: number; gateway: boolean },
  ) {}

  async create(userId: string, spec: NewEval, budgets: readonly BudgetRef[]): Promise<EvalRecord> {
    this.refuseUnreachableJudges(spec.scorers);
    const row = await this.knex.transaction(async (trx) => {
      // One user's creates queue behind each other here, so the active-eval bound holds under races.
      await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 24))', [`evals:${userId}`]);
      // One after another: a transaction's statements share its one connection.
      const dataset = await trx('datasets').where({ id: spec.dataset_id, user_id: userId }).first('id', 'item_count');
      const agent = await trx('agents').where({ id: spec.agent_id, user_id: userId }).whereNull('deleted_at').first('id', 'version');
      const active = await trx('evals').where({ user_id: userId }).whereIn('status', ['queued', 'running']).count({ n: '*' }).first();
      if (!dataset) throw new NotFoundError('Dataset not found', 'Dataset');
      if (!agent) throw new NotFoundError('Agent not found', 'Agent');
      if (dataset.item_count === 0) throw invalid('dataset_id', 'the dataset has no items: add some first', spec.dataset_id);
      const version = spec.agent_version ?? agent.version;
      if (version !== agent.version && !(await trx('agent_versions').where({ agent_id: agent.id, version }).first('version'))) {
        throw invalid('agent_version', `the agent has no version ${version} (its versions are 1 to ${agent.version})`, version);
      }
      if (Number(active?.n ?? 0) >= this.options.activePerUser) {
        throw new RateLimitedError(`You already have ${this.options.activePerUser} evals queued or running (EVALS_ACTIVE_PER_USER); wait for one to finish`, ACTIVE_LIMIT_RETRY_SECONDS);
      }
      const [created]: EvalRow[] = await trx('evals')
        .insert({ user_id: userId, dataset_id: dataset.id, agent_id: agent.id, agent_version: version, mode: spec.mode, scorers: JSON.stringify(spec.scorers), concurrency: spec.concurrency, total: dataset.item_count, budgets: JSON.stringify(budgets) })
        .returning(EVAL_COLUMNS);
      await trx.raw(
        `insert into eval_items (eval_id, item_id, position, input, expected)
         select ?, d.id, row_number() over (order by d.position), d.input, d.expected from dataset_items d where d.dataset_id = ?`,
        [created!.id, dataset.id],
      );
      return created!;
    });
    // Not queued (Redis failed)? The workers' sweep queues an active eval whose job is missing; the eval stands.
    await this.queue.add('drive', { evalId: row.id }, { ...evalJobOptions, jobId: row.id }).catch(() => undefined);
    return presentEval(row);
  }

  /** llm_judge through a gateway model needs a gateway: refused at once rather than failing every item. */
  private refuseUnreachableJudges(scorers: Scorer[]): void {
    if (this.options.gateway) return;
    const index = scorers.findIndex((s) => s.type === 'llm_judge' && s.model !== LOCAL_MODEL);
    if (index >= 0) {
      const scorer = scorers[index] as Extract<Scorer, { type: 'llm_judge' }>;
      throw new ValidationError([{ loc: ['body', 'scorers', index, 'model'], msg: `Value error, no model gateway is configured: the judge can only be "${LOCAL_MODEL}"`, type: 'value_error', input: scorer.model }]);
    }
  }

  async own(userId: string, id: string): Promise<EvalRow> {
    const row: EvalRow | undefined = await this.knex('evals').where({ id, user_id: userId }).first(EVAL_COLUMNS);
    if (!row) throw new NotFoundError('Eval not found', 'Eval');
    return row;
  }

  async get(userId: string, id: string): Promise<EvalRecord> {
    return presentEval(await this.own(userId, id));
  }

  async list(userId: string, page: Pagination, filter: { dataset_id?: string; agent_id?: string } = {}): Promise<Page<EvalRecord>> {
    const where = (q: Knex.QueryBuilder) => {
      q.where({ user_id: userId });
      if (filter.dataset_id) q.where({ dataset_id: filter.dataset_id });
      if (filter.agent_id) q.where({ agent_id: filter.agent_id });
      return q;
    };
    const [rows, counted] = await Promise.all([
      where(this.knex('evals')).orderBy([{ column: 'created_at', order: 'desc' }, 'id']).limit(page.size).offset((page.page - 1) * page.size).select(EVAL_COLUMNS),
      where(this.knex('evals')).count({ total: '*' }),
    ]);
    return pageOf(rows.map(presentEval), Number(counted[0]?.total ?? 0), page);
  }

  async results(userId: string, id: string, page: Pagination): Promise<Page<EvalResult>> {
    const row = await this.own(userId, id);
    const items = await this.knex('eval_items')
      .where({ eval_id: id })
      .orderBy('position')
      .limit(page.size)
      .offset((page.page - 1) * page.size)
      .select('item_id', 'run_id', 'status', 'input', 'expected', 'output', 'scores', 'passed', 'error');
    return pageOf(items.map((item) => ({ ...item, expected: item.expected ?? null })), row.total, page);
  }

  /**
   * Stops the eval: no item starts after this, pending ones are cancelled, and the runs of running
   * ones are cancelled. 409 once it is final.
   */
  async cancel(userId: string, id: string): Promise<EvalRecord> {
    const { row, running } = await this.knex.transaction(async (trx) => {
      const [row]: EvalRow[] = await trx('evals').where({ id, user_id: userId }).whereIn('status', ['queued', 'running']).update({ status: 'cancelled', finished_at: trx.fn.now() }).returning(EVAL_COLUMNS);
      if (!row) {
        await this.own(userId, id);
        throw new ConflictError('eval_final', 'The eval has already finished; there is nothing to cancel');
      }
      await trx('eval_items').where({ eval_id: id, status: 'pending' }).update({ status: 'cancelled', finished_at: trx.fn.now() });
      const running: { run_id: string }[] = await trx('eval_items').where({ eval_id: id, status: 'running' }).select('run_id');
      return { row, running };
    });
    // A run may have just ended, or not be written yet: its driver sees the eval cancelled either way.
    await Promise.allSettled(running.map(({ run_id }) => this.cancelRun(userId, run_id)));
    return presentEval(row);
  }

  /** Two evals of one dataset side by side: each shared scorer's means, and per item a's wins, losses and ties against b. */
  async compare(userId: string, aId: string, bId: string): Promise<EvalComparison> {
    const [a, b] = await Promise.all([this.own(userId, aId), this.own(userId, bId)]);
    if (a.dataset_id !== b.dataset_id) throw new ValidationError([{ loc: ['query', 'b'], msg: 'Value error, the two evals must be of the same dataset', type: 'value_error', input: bId }]);
    const shared = a.scorers.map(scorerName).filter((name) => b.scorers.some((s) => scorerName(s) === name));
    // Aggregated in Postgres: the answer's cost does not grow with the dataset in this process.
    const { rows }: { rows: { name: string | null; a: number | null; b: number | null; wins: string; losses: string; ties: string; compared: string }[] } = await this.knex.raw(
      `with pairs as (
         select x.scores as sa, y.scores as sb from eval_items x
         join eval_items y on y.eval_id = ? and y.item_id = x.item_id and y.status in ('scored', 'failed')
         where x.eval_id = ? and x.status in ('scored', 'failed')
       ), per_scorer as (
         select k as name, coalesce((sa->>k)::float8, 0) as va, coalesce((sb->>k)::float8, 0) as vb from pairs, unnest(?::text[]) k
       ), per_item as (
         select (select coalesce(sum(coalesce((sa->>k)::float8, 0)), 0) from unnest(?::text[]) k) as va,
                (select coalesce(sum(coalesce((sb->>k)::float8, 0)), 0) from unnest(?::text[]) k) as vb from pairs
       )
       select name, avg(va) as a, avg(vb) as b, count(*) filter (where va > vb) as wins, count(*) filter (where va < vb) as losses, count(*) filter (where va = vb) as ties, count(*) as compared
       from per_scorer group by name
       union all
       select null, null, null, count(*) filter (where va > vb), count(*) filter (where va < vb), count(*) filter (where va = vb), count(*) from per_item`,
      [b.id, a.id, shared, shared, shared],
    );
    const scorers: EvalComparison['scorers'] = Object.fromEntries(shared.map((name) => [name, { a: null, b: null, wins: 0, losses: 0, ties: 0 }]));
    let items = { compared: 0, wins: 0, losses: 0, ties: 0 };
    for (const row of rows) {
      const tally = { wins: Number(row.wins), losses: Number(row.losses), ties: Number(row.ties) };
      if (row.name === null) items = { compared: Number(row.compared), ...tally };
      else scorers[row.name] = { a: row.a === null ? null : round(Number(row.a)), b: row.b === null ? null : round(Number(row.b)), ...tally };
    }
    const side = (row: EvalRow) => {
      const record = presentEval(row);
      return { id: row.id, agent_id: row.agent_id, agent_version: row.agent_version, status: row.status, summary: record.summary };
    };
    return { dataset_id: a.dataset_id, a: side(a), b: side(b), scorers, items };
  }
}

const round = (n: number) => Math.round(n * 1e6) / 1e6;
