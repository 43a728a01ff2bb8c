import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.js';
import { ofType, stream } from './support/sse.js';

/**
 * Token budgets (DESIGN §18) on a web + worker stack with the deterministic local model, whose
 * usage is the words it read and wrote: a spent budget refuses a run on every interface before it
 * starts (429 insufficient_quota, Retry-After up to the reset), and a run that crosses it makes no
 * further model call, ends failed with insufficient_quota, and keeps its answer so far.
 */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ webs: 1, workers: 1 });
});
afterAll(() => stack.stop());

const SECONDS_PER_DAY = 24 * 3600;

/** A user with a key whose budget is `limit` tokens a day; the key's id too. */
async function budgetedKey(limit: number) {
  const { user, key } = await stack.user();
  const listed = await stack.api(key, 'GET', '/api/me/api-keys');
  const keyId = listed.body.items[0].id as string;
  const patched = await stack.api(key, 'PATCH', `/api/me/api-keys/${keyId}`, { token_budget: { limit, period: 'day' } });
  expect(patched.status).toBe(200);
  expect(patched.body.token_budget).toEqual({ limit, period: 'day' });
  return { user, key, keyId };
}

const react = (key: string, q: string, extra: Record<string, unknown> = {}) => stream(`${stack.url}/api/react`, { token: key, body: { q, ...extra } });
const runRow = (runId: string) => stack.knex('runs').where({ id: runId }).first();

describe('token budgets', () => {
  it('a run that crosses its budget makes no further model call: failed, insufficient_quota; then every interface refuses', async () => {
    const { key, keyId } = await budgetedKey(1);
    // The local model calls the calculator, then answers: the first call spends the budget, the second is never made.
    const crossed = await react(key, 'What is 12*7?');
    expect(ofType(crossed.events, 'tool_call')).toHaveLength(1);
    expect(ofType(crossed.events, 'token')).toHaveLength(0);
    expect(ofType(crossed.events, 'error')[0]!.data).toMatchObject({ code: 'insufficient_quota', retryable: false });
    const done = ofType(crossed.events, 'done')[0]!.data;
    expect(done.status).toBe('failed');
    const row = await runRow(crossed.headers.get('x-run-id')!);
    expect(row).toMatchObject({ status: 'failed', error: { code: 'insufficient_quota' } });
    expect(done.usage.total_tokens).toBeGreaterThan(1);

    const keys = await stack.api(key, 'GET', '/api/me/api-keys');
    const record = keys.body.items.find((k: { id: string }) => k.id === keyId);
    const today = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate()));
    expect(record.token_usage).toEqual({ used: done.usage.total_tokens, period_start: today.toISOString(), resets_at: new Date(today.getTime() + SECONDS_PER_DAY * 1000).toISOString() });

    const refused = await react(key, 'hello');
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error: 'insufficient_quota' });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(SECONDS_PER_DAY);
    const background = await stack.api(key, 'POST', '/api/runs', { mode: 'dag', q: 'hello' });
    expect(background).toMatchObject({ status: 429, body: { error: 'insufficient_quota' } });

    const openai = new OpenAI({ apiKey: key, baseURL: `${stack.url}/v1`, maxRetries: 0 });
    const viaOpenAi = await openai.chat.completions.create({ model: 'agent:default', messages: [{ role: 'user', content: 'hello' }] }).catch((err: unknown) => err);
    expect(viaOpenAi).toBeInstanceOf(OpenAI.RateLimitError);
    expect((viaOpenAi as InstanceType<typeof OpenAI.RateLimitError>).error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota' });

    const agent = await stack.api(key, 'POST', '/api/agents', { name: 'budgeted', model: 'local' });
    const mcp = new Client({ name: 'test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${stack.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    try {
      const result = await mcp.callTool({ name: 'budgeted', arguments: { q: 'hello' } });
      expect(agent.status).toBe(201);
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.content)).toContain('token budget');
    } finally {
      await mcp.close();
    }
    // No run was stored for a refusal.
    expect(await stack.knex('runs').where({ user_id: row.user_id }).count('* as n').first()).toEqual({ n: '1' });
  });

  it("a run stopped by its budget keeps its answer so far (a DAG's node answers before the synthesis)", async () => {
    const query = 'Tell me about cats and tell me about dogs';
    // The plan reads the question (9 words): the budget lets the nodes start, which spend it; the synthesis is never called.
    const { key } = await budgetedKey(query.split(' ').length + 1);
    const res = await stream(`${stack.url}/api/dag`, { token: key, body: { q: query } });
    expect(ofType(res.events, 'error')[0]!.data.code).toBe('insufficient_quota');
    expect(ofType(res.events, 'node').some((e) => e.data.status === 'succeeded')).toBe(true);
    const row = await runRow(res.headers.get('x-run-id')!);
    expect(row.status).toBe('failed');
    expect(row.answer).toContain('You asked');
  });

  it('a user budget covers the JWT and every key of the user; another user is untouched', async () => {
    const { user, key } = await stack.user();
    const { key: adminKey } = await stack.user('admin');
    const patched = await stack.api(adminKey, 'PATCH', `/api/admin/users/${user.id}`, { token_budget: { limit: 1, period: 'month' } });
    expect(patched.status).toBe(200);
    expect(patched.body.token_budget).toEqual({ limit: 1, period: 'month' });
    expect((await react(key, 'hello')).events.at(-1)).toMatchObject({ type: 'done', data: { status: 'succeeded' } });
    const second = await stack.api(key, 'POST', '/api/me/api-keys', { name: 'second' });
    const refused = await react(second.body.key, 'hello');
    expect(refused).toMatchObject({ status: 429, body: { error: 'insufficient_quota' } });
    const monthEnd = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() + 1, 1));
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(Math.ceil((monthEnd.getTime() - Date.now()) / 1000) + 1);
    const users = await stack.api(adminKey, 'GET', `/api/admin/users/${user.id}`);
    expect(users.body.token_usage.used).toBeGreaterThan(1);
    const { key: otherKey } = await stack.user();
    expect((await react(otherKey, 'hello')).events.at(-1)).toMatchObject({ type: 'done', data: { status: 'succeeded' } });
  });

  it('concurrent runs of one key overspend by at most one model call each', async () => {
    const { key, keyId } = await budgetedKey(1);
    const raced = await Promise.all(Array.from({ length: 6 }, () => react(key, 'What is 6*7?')));
    const started = raced.filter((res) => res.status === 200);
    expect(started.length).toBeGreaterThan(0);
    for (const res of raced.filter((r) => r.status !== 200)) expect(res).toMatchObject({ status: 429, body: { error: 'insufficient_quota' } });
    let charged = 0;
    for (const res of started) {
      // Each run made its first model call (the calculator's) at most: never the answer after it.
      expect(ofType(res.events, 'token')).toHaveLength(0);
      expect(ofType(res.events, 'tool_call').length).toBeLessThanOrEqual(1);
      expect(ofType(res.events, 'error')[0]!.data.code).toBe('insufficient_quota');
      charged += ofType(res.events, 'done')[0]!.data.usage.total_tokens;
    }
    const keys = await stack.api(key, 'GET', '/api/me/api-keys');
    expect(keys.body.items.find((k: { id: string }) => k.id === keyId).token_usage.used).toBe(charged);
  });
});
