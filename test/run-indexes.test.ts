import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Knex } from 'knex';
import { createKnex } from '../src/db/knex.js';
import { bindModels, type Models } from '../src/db/models.js';
import { RunReports } from '../src/admin/runs.js';
import { RunStore } from '../src/engine/run-store.js';
import { RunService } from '../src/runs/service.js';
import { FINAL_RUN_STATUSES, RUN_STATUSES } from '../src/shared/run-statuses.js';
import { parkedRuns } from '../workers/runs/wake-sweep.js';
import { createDatabase } from './support/database.js';
import { record, type Recorded } from './support/plans.js';

/**
 * `runs` keeps few indexes (issue 36: every write that is not HOT inserts into each), and the
 * queries that used the dropped ones are still bounded by an index: the real code's statements,
 * recorded as they run against 60,000 runs of another user, are planned on the index named here.
 */
const OTHER_RUNS = 60_000;
const ACTIVE_STATUSES = RUN_STATUSES.filter((status) => !(FINAL_RUN_STATUSES as readonly string[]).includes(status));

let database: Awaited<ReturnType<typeof createDatabase>>;
let knex: Knex;
let models: Models;
let me: { user: string; conversation: string; run: string };

async function seed() {
  const [other] = await knex('users').insert({ email: 'other@example.test', password_hash: 'x' }).returning('id');
  await knex.raw(`insert into conversations (id, user_id, title) select gen_random_uuid(), ?, 's' from generate_series(1, ?)`, [other.id, OTHER_RUNS]);
  // Mostly final, as a platform's history is; one in 500 still active or parked.
  await knex.raw(
    `insert into runs (id, user_id, conversation_id, mode, status, created_at)
     select gen_random_uuid(), user_id, id, 'react',
            case when n % 500 = 0 then (array['queued', 'running', 'waiting', 'requires_action'])[1 + (n / 500) % 4]
                 when n % 50 = 0 then 'failed' else 'succeeded' end,
            now() - n * interval '2 seconds'
     from (select c.*, row_number() over () as n from conversations c) c`,
  );
  const [user] = await knex('users').insert({ email: 'me@example.test', password_hash: 'x' }).returning('id');
  const [conversation] = await knex('conversations').insert({ user_id: user.id, title: 'mine' }).returning('id');
  const runs = await knex.raw(
    `insert into runs (id, user_id, conversation_id, mode, status, required_action)
     select gen_random_uuid(), ?, ?, 'react', case when g = 1 then 'requires_action' else 'succeeded' end,
            case when g = 1 then '{"tool_calls": [{"id": "call_1"}]}'::jsonb end
     from generate_series(1, 20) g returning id`,
    [user.id, conversation.id],
  );
  await knex.raw('vacuum analyze runs');
  return { user: user.id, conversation: conversation.id, run: runs.rows[0].id };
}

beforeAll(async () => {
  database = await createDatabase({ migrate: true });
  knex = createKnex(database.url, { poolMax: 2 });
  models = bindModels(knex);
  me = await seed();
}, 120_000);

afterAll(async () => {
  await knex?.destroy();
  await database?.drop();
});

const indexesOfRuns = async () =>
  (await knex.raw(`select indexname, indexdef from pg_indexes where tablename = 'runs' order by indexname`)).rows as { indexname: string; indexdef: string }[];

/** Every node of a plan, as "Node Type", "Node Type index" or "Seq Scan table". */
function planNodes(plan: Record<string, unknown>, found: string[] = []): string[] {
  const on = plan['Index Name'] ?? (plan['Node Type'] === 'Seq Scan' ? plan['Relation Name'] : undefined);
  found.push(on ? `${plan['Node Type']} ${on}` : String(plan['Node Type']));
  for (const child of (plan['Plans'] as Record<string, unknown>[] | undefined) ?? []) planNodes(child, found);
  return found;
}

/** The plan nodes of each statement on `runs` that `work` makes. */
async function plansOf(work: () => Promise<unknown>): Promise<string[][]> {
  const recorded: Recorded[] = [];
  record(knex, recorded);
  try {
    await work();
  } finally {
    knex.removeAllListeners('query');
  }
  const plans: string[][] = [];
  const connection = await knex.client.acquireConnection();
  try {
    for (const { sql, bindings } of recorded.filter(({ sql }) => /\bruns\b/.test(sql))) {
      // The query event carries some statements with ? placeholders and some already numbered ($1).
      const native = /\$\d/.test(sql) ? { sql, bindings } : knex.raw(sql, bindings as Knex.RawBinding[]).toSQL().toNative();
      const { rows } = await connection.query(`explain (format json) ${native.sql}`, native.bindings);
      plans.push(planNodes(rows[0]['QUERY PLAN'][0].Plan));
    }
  } finally {
    await knex.client.releaseConnection(connection);
  }
  expect(plans.length).toBeGreaterThan(0);
  return plans;
}

describe('the indexes of runs', () => {
  it('are eight, and only runs_created and the partial index of active runs name the status', async () => {
    const indexes = await indexesOfRuns();
    expect(indexes.map((index) => index.indexname)).toEqual([
      'runs_active',
      'runs_agent_id_index',
      'runs_conversation_id_created_at_index',
      'runs_created',
      'runs_eval',
      'runs_pkey',
      'runs_schedule_created',
      'runs_user_id_created_at_index',
    ]);
    expect(indexes.filter((index) => /\bstatus\b/.test(index.indexdef)).map((index) => index.indexname)).toEqual(['runs_active', 'runs_created']);
    const active = indexes.find((index) => index.indexname === 'runs_active')!.indexdef;
    // The predicate holds exactly the statuses that are not final.
    for (const status of RUN_STATUSES) expect(active.includes(`'${status}'`), status).toBe(ACTIVE_STATUSES.includes(status));
    const { rows } = await knex.raw(`select reloptions from pg_class where relname = 'runs'`);
    expect(rows[0].reloptions).toEqual(['fillfactor=85']);
  });

  it("plan a user's parked run (/v1) and the wake sweep on the partial index of active runs", async () => {
    const runs = new RunService(models, undefined as never, undefined as never, undefined as never, { perUser: 1 }, undefined as never, undefined as never, undefined as never);
    const [byCalls] = await plansOf(async () => expect((await runs.findRequiringAction(me.user, ['call_1']))?.id).toBe(me.run));
    expect(byCalls).toContain('Index Scan runs_active');
    const [sweep] = await plansOf(async () => expect((await parkedRuns(knex)).length).toBeGreaterThan(0));
    expect(sweep).toContain('Index Scan runs_active');
  });

  it("plan the admin's count and cancel of a user's active runs on it", async () => {
    const store = new RunStore(knex, models);
    const [active] = await plansOf(() => store.activeRunsOf(me.user));
    expect(active.some((node) => /^Index (Only )?Scan runs_active$/.test(node))).toBe(true);
  });

  it('plan the admin run list by an active status on it, by a final one or none by time, by user on the user index', async () => {
    const reports = new RunReports(knex, models);
    const page = { page: 1, size: 20 };
    const listed = async (filters: Parameters<RunReports['list']>[0]) => (await plansOf(() => reports.list(filters, page))).flat();
    expect(await listed({ status: 'running' })).not.toContain('Seq Scan runs');
    expect(await listed({ status: 'running' })).toEqual(expect.arrayContaining([expect.stringMatching(/runs_active$/)]));
    expect(await listed({ user_id: me.user })).toEqual(expect.arrayContaining([expect.stringMatching(/runs_user_id_created_at_index$/)]));
    expect(await listed({ user_id: me.user, status: 'succeeded' })).not.toContain('Seq Scan runs');
    // An eval's runs (DESIGN §24) on the partial index of runs that carry one.
    expect(await listed({ eval_id: me.run })).toEqual(expect.arrayContaining([expect.stringMatching(/runs_eval$/)]));
    const newest = (await plansOf(() => reports.list({}, page)))[0]!;
    expect(newest).toContain('Index Scan runs_created');
  });

  it("plan a conversation's admission on an index bounded by the conversation", async () => {
    const store = new RunStore(knex, models);
    const [admission] = await plansOf(() => store.admitQueued(me.run, me.conversation));
    expect(admission).not.toContain('Seq Scan runs');
    expect(admission.some((node) => node.endsWith('runs_conversation_id_created_at_index'))).toBe(true);
  });

  it('come back as they were when the migration is rolled back, and again when it is applied', async () => {
    const before = await indexesOfRuns();
    // This migration alone (later ones stay applied: none leans on these indexes).
    await knex.migrate.down({ name: '20261128_029_run_indexes' });
    const rolledBack = (await indexesOfRuns()).map((index) => index.indexname);
    expect(rolledBack).toEqual(expect.arrayContaining(['runs_parked', 'runs_status_created', 'runs_user_id_status_index']));
    expect(rolledBack).not.toContain('runs_active');
    expect(rolledBack).toHaveLength(10);
    await knex.migrate.latest();
    expect(await indexesOfRuns()).toEqual(before);
  });
});
