import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.js';
import { eventually } from './support/eventually.js';

/** Evals (DESIGN §24): datasets, eval runs of an agent's version on the queue, scores, cancel, compare. */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ workers: 1 });
});
afterAll(() => stack.stop());

const ITEMS = [
  { input: { q: 'What is 12*7?' }, expected: '84' },
  { input: { q: 'What is 6*7?' }, expected: '42' },
  { input: { q: 'What is 2+2?' }, expected: '5' },
];

async function setup() {
  const { key } = await stack.user();
  const agent = (await stack.api(key, 'POST', '/api/agents', { name: 'calc' })).body;
  const dataset = (await stack.api(key, 'POST', '/api/datasets', { name: 'arithmetic' })).body;
  const added = await stack.api(key, 'POST', `/api/datasets/${dataset.id}/items`, ITEMS);
  expect(added.status).toBe(201);
  return { key, agent, dataset };
}

const finished = (key: string, id: string) =>
  eventually(async () => {
    const { body } = await stack.api(key, 'GET', `/api/evals/${id}`);
    return ['succeeded', 'failed', 'cancelled'].includes(body.status) && body;
  }, 'the eval to end', { timeoutMs: 60_000 });

describe('evals', () => {
  it('runs each item as a background run carrying eval_id, scores it, and summarises', async () => {
    const { key, agent, dataset } = await setup();
    const created = await stack.api(key, 'POST', '/api/evals', {
      dataset_id: dataset.id,
      agent_id: agent.id,
      scorers: [{ type: 'contains' }, { type: 'numeric' }, { type: 'regex', pattern: '\\b(84|42)\\b' }, { type: 'llm_judge', model: 'local', rubric: 'correct' }],
      concurrency: 2,
    });
    expect(created.status).toBe(202);
    expect(created.body).toMatchObject({ status: 'queued', progress: { done: 0, total: 3 }, agent_version: 1, concurrency: 2 });
    const done = await finished(key, created.body.id);
    expect(done).toMatchObject({ status: 'succeeded', progress: { done: 3, failed: 0, total: 3 } });
    expect(done.summary.contains).toBeCloseTo(2 / 3, 5);
    expect(done.summary.numeric).toBeCloseTo(2 / 3, 5);
    expect(done.summary.regex).toBeCloseTo(2 / 3, 5);
    expect(done.summary.llm_judge).toBeCloseTo(2 / 3, 5);
    const results = await stack.api(key, 'GET', `/api/evals/${created.body.id}/results`);
    expect(results.body.total).toBe(3);
    expect(results.body.items.map((r: any) => r.passed)).toEqual([true, true, false]);
    const run = await stack.api(key, 'GET', `/api/runs/${results.body.items[0].run_id}`);
    expect(run.body).toMatchObject({ eval_id: created.body.id, agent_id: agent.id, agent_version: 1, status: 'succeeded' });
  });
});
