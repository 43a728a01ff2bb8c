import { describe, expect, it } from 'vitest';
import { LocalModel } from '../workers/models/local.js';
import { planMessages, readPlan } from '../workers/models/gateway/planner.js';
import type { PlanRequest } from '../workers/models/types.js';

/** DAG_MAX_NODES: no question plans more nodes than the limit; the rest is merged, and the plan says so. */
const request = (query: string): PlanRequest => ({
  query,
  model: 'local',
  settings: { apiFormat: 'chat' } as PlanRequest['settings'],
  signal: new AbortController().signal,
});

describe('plan limits', () => {
  it('the local planner merges sub-questions past DAG_MAX_NODES into the last task', async () => {
    const questions = Array.from({ length: 301 }, (_, i) => `what is ${i}+1`);
    const { nodes } = await new LocalModel(0).plan(request(questions.join(' and ')));
    expect(nodes).toHaveLength(16);
    expect(nodes.slice(0, 14).map((n) => n.task)).toEqual(questions.slice(0, 14));
    const merged = nodes[14]!;
    expect(merged.task).toContain('287 sub-tasks merged');
    for (const question of questions.slice(14)) expect(merged.task).toContain(question);
    expect(nodes[15]).toMatchObject({ id: 'synthesis', depends_on: nodes.slice(0, 15).map((n) => n.id) });
  });

  it('honours a configured limit, down to one task and the synthesis', async () => {
    const query = 'a and b and c and d';
    expect((await new LocalModel(0, 3).plan(request(query))).nodes.map((n) => n.task)).toEqual([
      'a',
      '3 sub-tasks merged into this one (plans are limited to 3 nodes); answer each: b; c; d',
      'Combine the answers to: a and b and c and d',
    ]);
    expect((await new LocalModel(0, 2).plan(request(query))).nodes).toHaveLength(2);
    expect((await new LocalModel(0, 16).plan(request(query))).nodes).toHaveLength(5);
  });

  it('a gateway plan past the limit is merged too; merged dependencies keep only the kept tasks', () => {
    const tasks = Array.from({ length: 40 }, (_, i) => ({ id: `t${i}`, task: `task ${i}`, depends_on: i > 0 ? [`t${i - 1}`] : [] }));
    const nodes = readPlan(JSON.stringify({ tasks }), 'Q', 6);
    expect(nodes.map((n) => n.id)).toEqual(['t0', 't1', 't2', 't3', 't4', 'synthesis']);
    expect(nodes[4]).toMatchObject({ task: expect.stringContaining('36 sub-tasks merged'), depends_on: ['t3'] });
    expect(nodes[5]!.depends_on).toEqual(['t0', 't1', 't2', 't3', 't4']);
  });

  it('asks the model for no more tasks than the limit allows', () => {
    expect(planMessages('Q', 4)[0]!.content).toContain('Use at most 3 tasks');
    expect(planMessages('Q')[0]!.content).toContain('Use at most 8 tasks');
  });
});
