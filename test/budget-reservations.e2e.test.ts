import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.js';
import { ofType, stream, type StreamResult } from './support/sse.js';
import { eventually } from './support/eventually.js';

/**
 * Budgets that hold (DESIGN §21) on a web + worker stack with the local model streaming slowly:
 * a model call cut off by a cancel is charged (an estimate, marked so) on the record, `done.usage`,
 * the usage report and the budget; the calls of one budget in flight share its reservations, so a
 * DAG's parallel nodes and concurrent runs of one key overshoot it by at most one model call.
 */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ webs: 1, workers: 1, env: { LOCAL_MODEL_TOKEN_DELAY_MS: '10' } });
});
afterAll(() => stack.stop());

/** A user with a key whose budget is `limit` tokens a day. */
async function budgetedKey(limit: number) {
  const { user, key } = await stack.user();
  const listed = await stack.api(key, 'GET', '/api/me/api-keys');
  const keyId = listed.body.items[0].id as string;
  expect((await stack.api(key, 'PATCH', `/api/me/api-keys/${keyId}`, { token_budget: { limit, period: 'day' } })).status).toBe(200);
  const used = async () => (await stack.api(key, 'GET', '/api/me/api-keys')).body.items.find((k: { id: string }) => k.id === keyId).token_usage.used as number;
  return { user, key, used };
}

const react = (key: string, q: string, extra: Parameters<typeof stream>[1] = {}) => stream(`${stack.url}/api/react`, { token: key, body: { q }, ...extra });
/** The run's tokens, from its `done`; a run that did not stream fails here, saying what it got. */
function totalOf(res: StreamResult): number {
  const done = ofType(res.events, 'done')[0];
  expect(done, JSON.stringify({ status: res.status, body: res.body, events: res.events.length })).toBeDefined();
  return done!.data.usage.total_tokens;
}

/** The tokens of one model call answering `q` (the local model is deterministic): a one-call ReAct run on a key without a budget. */
async function oneCall(q: string): Promise<number> {
  const { key } = await stack.user();
  const res = await react(key, q);
  expect(ofType(res.events, 'tool_call')).toHaveLength(0);
  return totalOf(res);
}

describe('every model call charged', () => {
  it('a run cancelled after 100 streamed words records its tokens, estimated, on the record, done.usage, the usage report and its budget', async () => {
    const { user, key, used } = await budgetedKey(1_000_000);
    const { key: adminKey } = await stack.user('admin');
    const question = Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ');
    let runId = '';
    let tokens = 0;
    let cancelled: Promise<unknown> | undefined;
    const res = await react(key, question, {
      onEvent: (event) => {
        if (event.type === 'run') runId = event.data.run_id;
        if (event.type === 'token' && ++tokens === 100) cancelled = stack.api(key, 'POST', `/api/runs/${runId}/cancel`);
      },
    });
    expect(res, JSON.stringify({ status: res.status, body: res.body, tokens })).toMatchObject({ status: 200 });
    expect(await cancelled).toMatchObject({ status: 202 });
    const done = ofType(res.events, 'done')[0]!.data;
    expect(done.status).toBe('cancelled');
    expect(done.usage.estimated).toBe(true);
    // The prompt (400 words) and at least the 100 words streamed.
    expect(done.usage.prompt_tokens).toBeGreaterThanOrEqual(400);
    expect(done.usage.completion_tokens).toBeGreaterThanOrEqual(100);
    expect(done.usage.total_tokens).toBe(done.usage.prompt_tokens + done.usage.completion_tokens);

    const record = await stack.api(key, 'GET', `/api/runs/${runId}`);
    expect(record.body.usage).toMatchObject({ total_tokens: done.usage.total_tokens, estimated: true });
    expect(await used()).toBe(done.usage.total_tokens);
    const report = await stack.api(adminKey, 'GET', `/api/admin/usage?user_id=${user.id}`);
    const row = report.body.items[0];
    expect(row.prompt_tokens + row.completion_tokens).toBe(done.usage.total_tokens);
  });
});

describe('reservations bound overshoot per budget', () => {
  it('one DAG run of 8 parallel nodes on a 32-token budget ends with used ≤ limit + the largest single call', async () => {
    const animals = ['cats', 'dogs', 'birds', 'fish', 'frogs', 'bees', 'ants', 'owls'];
    const limit = 32;
    const { key, used } = await budgetedKey(limit);
    const res = await stream(`${stack.url}/api/dag`, { token: key, body: { q: animals.join(' and ') } });
    expect(res, JSON.stringify({ status: res.status, body: res.body })).toMatchObject({ status: 200 });
    expect(ofType(res.events, 'plan')[0]!.data.nodes).toHaveLength(animals.length + 1);
    expect(ofType(res.events, 'error')[0]!.data.code).toBe('insufficient_quota');
    const largest = Math.max(...(await Promise.all(animals.map(oneCall))));
    const spent = await used();
    expect(spent).toBe(totalOf(res));
    expect(spent).toBeGreaterThanOrEqual(limit);
    expect(spent).toBeLessThanOrEqual(limit + largest);
  });

  it('20 concurrent runs of one key on a small budget end with used ≤ limit + the largest single call', async () => {
    const question = 'tell me about the weather';
    const largest = await oneCall(question);
    const limit = 2 * largest;
    const { key, used } = await budgetedKey(limit);
    const raced = await Promise.all(Array.from({ length: 20 }, () => react(key, question)));
    for (const res of raced.filter((r) => r.status !== 200)) expect(res).toMatchObject({ status: 429, body: { error: 'insufficient_quota' } });
    const started = raced.filter((res) => res.status === 200);
    expect(started.length).toBeGreaterThan(2);
    const charged = started.reduce((sum, res) => sum + totalOf(res), 0);
    await eventually(async () => (await used()) === charged, 'every run charged');
    expect(charged).toBeGreaterThanOrEqual(limit);
    expect(charged).toBeLessThanOrEqual(limit + largest);
    const quotaFailures = started.filter((res) => ofType(res.events, 'error')[0]?.data.code === 'insufficient_quota');
    expect(quotaFailures.length).toBeGreaterThan(0);
  });
});
