import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.js';
import { ofType, stream } from './support/sse.js';
import { politely } from './support/retry.js';

/** Two worker processes, 100 runs at once: all complete, each executed exactly once (a client told 429 retries, as asked). */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ workers: 2, env: { RUNS_PER_USER_LIMIT: '1000' } });
});
afterAll(() => stack.stop());

describe('two workers', () => {
  // A load test: on a slow machine its clients wait out 429s (politely), so it gets more time than the default.
  it('complete 100 concurrent runs, each exactly once', { timeout: 120_000 }, async () => {
    const { key } = await stack.user();
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) => politely(() => stream(`${stack.url}/api/react`, { token: key, body: { q: `What is ${i}*3?` } }))),
    );
    // Status first, with the body: a refusal says why.
    expect(results.filter((r) => r.status !== 200).map((r) => ({ status: r.status, body: r.body }))).toEqual([]);
    const runIds = results.map((r) => r.headers.get('x-run-id')!);
    expect(new Set(runIds).size).toBe(100);
    for (const [i, res] of results.entries()) {
      const counts = Object.fromEntries(['run', 'status', 'tool_call', 'tool_result', 'answer', 'done'].map((t) => [t, res.events.filter((e) => e.type === t).length]));
      expect(counts).toEqual({ run: 1, status: 1, tool_call: 1, tool_result: 1, answer: 1, done: 1 });
      expect(ofType(res.events, 'answer')[0]!.data.content).toContain(String(i * 3));
    }
    const runs = await stack.knex('runs').whereIn('id', runIds);
    expect(runs.filter((r) => r.status === 'succeeded')).toHaveLength(100);
    const answers = await stack.knex('messages').whereIn('run_id', runIds).where({ role: 'assistant' }).count('* as n').first();
    expect(Number(answers!.n)).toBe(100);
    // Each worker logs the runs it executed: together they ran every run once, and both took a share.
    const executed = stack.workers.map((w) => [...w.output.join('').matchAll(/"run_id":"([^"]+)"[^\n]*"msg":"run finished"/g)].map((m) => m[1]));
    expect(executed.flat().sort()).toEqual([...runIds].sort());
    expect(executed.every((ids) => ids.length > 0)).toBe(true);
  });
});
