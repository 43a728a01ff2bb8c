import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.js';
import { createDatabase } from './support/database.js';
import { LOCAL_MODEL } from '../src/shared/model-settings.js';

/**
 * Run cost end to end (DESIGN §18) on built web and worker processes with the deterministic
 * `local` model, the default model of runs without an agent. A database of its own: a price is
 * global, and no other suite's runs should be costed by this one's.
 */
let database: Awaited<ReturnType<typeof createDatabase>>;
let stack: Stack;
let admin: string;

beforeAll(async () => {
  database = await createDatabase();
  stack = await startStack({ env: { DATABASE_URL: database.url } });
  ({ key: admin } = await stack.user('admin'));
});
afterAll(async () => {
  await stack?.stop();
  await database?.drop();
});

const PRICE = `/api/admin/model-prices/${LOCAL_MODEL}`;
const INPUT = 2.5;
const OUTPUT = 10;

interface RunRecord {
  id: string;
  status: string;
  usage: { prompt_tokens: number; completion_tokens: number; reasoning_tokens: number };
  cost: number | null;
  created_at: string;
}

/** A background run, waited for until it is final. */
async function run(key: string, body: Record<string, unknown>): Promise<RunRecord> {
  const started = await stack.api(key, 'POST', '/api/runs', body);
  expect(started.status).toBe(202);
  const waited = await stack.api(key, 'GET', `/api/runs/${started.body.run_id}?wait=30`);
  expect(waited.body.status).toBe('succeeded');
  return waited.body;
}

/** Completion tokens already hold the reasoning tokens: they are not charged twice. */
const costOf = ({ usage }: RunRecord, input = INPUT, output = OUTPUT) => (usage.prompt_tokens * input + usage.completion_tokens * output) / 1_000_000;

describe('cost', () => {
  it('a run of a priced model carries the cost of its usage; without a price, null; the usage report sums them', async () => {
    const { key, user } = await stack.user();
    const unpriced = await run(key, { mode: 'react', q: 'What is 6*7?' });
    expect(unpriced.cost).toBeNull();
    expect(unpriced.usage.prompt_tokens).toBeGreaterThan(0);

    expect((await stack.api(admin, 'PUT', PRICE, { input_per_million: INPUT, output_per_million: OUTPUT })).status).toBe(201);
    const react = await run(key, { mode: 'react', q: 'What is 12*7?' });
    const dag = await run(key, { mode: 'dag', q: 'What is 2+2 and what is 3*3?' });
    // Through an agent that names the model.
    const agent = await stack.api(key, 'POST', '/api/agents', { name: 'costed', model: LOCAL_MODEL });
    expect(agent.status).toBe(201);
    const viaAgent = await run(key, { mode: 'react', q: 'Say hello', agent_id: agent.body.id });
    for (const priced of [react, dag, viaAgent]) {
      expect(priced.cost).not.toBeNull();
      expect(priced.cost).toBeCloseTo(costOf(priced), 12);
      expect(priced.cost).toBeGreaterThan(0);
    }
    // The same cost wherever the run is shown.
    expect((await stack.api(key, 'GET', `/api/runs/${react.id}`)).body.cost).toBe(react.cost);
    const listed = (await stack.api(admin, 'GET', `/api/admin/runs?user_id=${user.id}&size=100`)).body.items as RunRecord[];
    expect(Object.fromEntries(listed.map((r) => [r.id, r.cost]))).toEqual({ [unpriced.id]: null, [react.id]: react.cost, [dag.id]: dag.cost, [viaAgent.id]: viaAgent.cost });

    // A price removed: later runs have no cost; ended ones keep theirs.
    expect((await stack.api(admin, 'DELETE', PRICE)).status).toBe(204);
    const after = await run(key, { mode: 'react', q: 'What is 1+1?' });
    expect(after.cost).toBeNull();
    expect((await stack.api(key, 'GET', `/api/runs/${dag.id}`)).body.cost).toBe(dag.cost);

    // The report: this user's row sums the known costs, from the runs at the window's edge (the
    // default window ends now) and from the rollup (a whole day).
    const expected = react.cost! + dag.cost! + viaAgent.cost!;
    const edge = await stack.api(admin, 'GET', `/api/admin/usage?user_id=${user.id}`);
    expect(edge.status).toBe(200);
    expect(edge.body.items).toHaveLength(1);
    expect(edge.body.items[0]).toMatchObject({ key: user.id, runs: 5, succeeded: 5 });
    expect(edge.body.items[0].cost).toBeCloseTo(expected, 12);
    // Whole UTC days only (midnight to midnight): summed from the rollup alone.
    const first = unpriced.created_at.slice(0, 10);
    const afterLast = new Date(Date.parse(after.created_at.slice(0, 10)) + 24 * 3600 * 1000).toISOString().slice(0, 10);
    const whole = await stack.api(admin, 'GET', `/api/admin/usage?user_id=${user.id}&from=${first}&to=${afterLast}`);
    expect(whole.body.items).toHaveLength(1);
    expect(whole.body.items[0]).toMatchObject({ key: user.id, runs: 5, succeeded: 5 });
    expect(whole.body.items[0].cost).toBeCloseTo(expected, 12);

    // A user whose runs had no price: cost null, not 0.
    const other = await stack.user();
    await run(other.key, { mode: 'react', q: 'What is 3*3?' });
    const none = await stack.api(admin, 'GET', `/api/admin/usage?user_id=${other.user.id}`);
    expect(none.body.items).toEqual([expect.objectContaining({ key: other.user.id, runs: 1, cost: null })]);
  });

  it('a price of 0 costs 0, not null', async () => {
    const { key } = await stack.user();
    expect((await stack.api(admin, 'PUT', PRICE, { input_per_million: 0, output_per_million: 0 })).status).toBe(201);
    try {
      expect((await run(key, { mode: 'react', q: 'What is 5*5?' })).cost).toBe(0);
    } finally {
      await stack.api(admin, 'DELETE', PRICE);
    }
  });
});
