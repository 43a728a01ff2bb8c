import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.js';

/**
 * PARKED_RUNS_PER_USER (issue 44): a user's runs that carry client tools (and so may park
 * `requires_action`, DESIGN §23, each holding Redis keys and a delayed job for up to
 * CLIENT_TOOL_TIMEOUT_S) are bounded, also under racing requests: a new one past the bound gets
 * 429 with Retry-After on every interface that takes client tools; one ending makes room.
 */
const LIMIT = 3;
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ workers: 1, env: { LOCAL_MODEL_TOKEN_DELAY_MS: '0', PARKED_RUNS_PER_USER: String(LIMIT) } });
});
afterAll(() => stack?.stop());

const WEATHER = { name: 'get_weather', description: 'The weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

const post = (key: string, path: string, body: unknown) =>
  fetch(`${stack.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(async (res) => ({
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    body: (await res.json().catch(() => undefined)) as any,
  }));

const parkedCount = async (userId: string) => Number((await stack.knex('runs').where({ user_id: userId, status: 'requires_action' }).count('* as n').first())!.n);

describe('PARKED_RUNS_PER_USER', () => {
  it('racing requests never leave more runs parked than the limit; the rest get 429 naming the setting; an answered run makes room', async () => {
    const { key, user } = await stack.user();
    const started = await Promise.all(Array.from({ length: 12 }, (_, i) => post(key, '/api/runs', { mode: 'react', q: `Ask get_weather for City${i}`, client_tools: [WEATHER] })));
    const accepted = started.filter((r) => r.status === 202);
    const refused = started.filter((r) => r.status !== 202);
    expect(accepted).toHaveLength(LIMIT);
    for (const r of refused) {
      expect(r.status).toBe(429);
      expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(JSON.stringify(r.body)).toContain('PARKED_RUNS_PER_USER');
    }
    const parked = await Promise.all(accepted.map((r) => stack.api(key, 'GET', `/api/runs/${r.body.run_id}?wait=60`)));
    expect(parked.map((p) => p.body.status)).toEqual(Array(LIMIT).fill('requires_action'));
    expect(await parkedCount(user.id)).toBe(LIMIT);

    // Every interface that takes client tools is refused now; a run without them is not.
    expect((await post(key, '/api/react', { q: 'Ask get_weather for Rome', client_tools: [WEATHER] })).status).toBe(429);
    const v1 = await post(key, '/v1/chat/completions', { model: 'agent:default', messages: [{ role: 'user', content: 'Ask get_weather for Rome' }], tools: [{ type: 'function', function: WEATHER }] });
    expect(v1.status).toBe(429);
    expect(v1.body.error.message).toContain('PARKED_RUNS_PER_USER');
    const responses = await post(key, '/v1/responses', { model: 'agent:default', input: 'Ask get_weather for Rome', tools: [{ type: 'function', ...WEATHER }] });
    expect(responses.status).toBe(429);
    expect((await post(key, '/api/runs', { mode: 'react', q: 'What is 2+2?' })).status).toBe(202);
    expect(await parkedCount(user.id)).toBe(LIMIT);

    // One answered: it finishes, and the next run with client tools is taken.
    const [first] = parked;
    const call = first!.body.required_action.tool_calls[0];
    expect((await stack.api(key, 'POST', `/api/runs/${first!.body.id}/tool-outputs`, { tool_outputs: [{ call_id: call.id, output: 'sunny' }] })).status).toBe(202);
    expect((await stack.api(key, 'GET', `/api/runs/${first!.body.id}?wait=60`)).body.status).toBe('succeeded');
    const next = await post(key, '/api/runs', { mode: 'react', q: 'Ask get_weather for Oslo', client_tools: [WEATHER] });
    expect(next.status).toBe(202);
  });

  it("counts per user: another user's parked runs do not count", async () => {
    const [a, b] = await Promise.all([stack.user(), stack.user()]);
    const fill = await Promise.all(Array.from({ length: LIMIT }, (_, i) => post(a.key, '/api/runs', { mode: 'react', q: `Ask get_weather for Town${i}`, client_tools: [WEATHER] })));
    expect(fill.map((r) => r.status)).toEqual(Array(LIMIT).fill(202));
    expect((await post(b.key, '/api/runs', { mode: 'react', q: 'Ask get_weather for Lima', client_tools: [WEATHER] })).status).toBe(202);
  });
});
