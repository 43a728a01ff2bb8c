import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.js';

/** Background runs (DESIGN §10): started without a held stream, followed by a long poll from any web process. */
let stack: Stack;
let idle: Stack;
let idleKey: string;
beforeAll(async () => {
  [stack, idle] = await Promise.all([
    startStack({ webs: 2, workers: 1, env: { LOCAL_MODEL_TOKEN_DELAY_MS: '20' } }),
    // No worker: its runs stay queued.
    startStack({ workers: 0 }),
  ]);
  ({ key: idleKey } = await idle.user());
});
afterAll(() => Promise.all([stack.stop(), idle.stop()]));

const call = (base: string, key: string, method: string, path: string, body?: unknown) =>
  fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }).then(async (res) => ({
    status: res.status,
    headers: res.headers,
    body: (await res.json().catch(() => undefined)) as any,
  }));

describe('POST /api/runs', () => {
  it('answers 202 with Location at once; ?wait on another web process answers when the run is final', async () => {
    const { key } = await stack.user();
    const started = await call(stack.urls[0]!, key, 'POST', '/api/runs', { mode: 'react', q: 'What is 12*7?', user_metadata: 'batch-7' });
    expect(started.status).toBe(202);
    expect(started.body).toEqual({ run_id: expect.any(String), conversation_id: expect.any(String), status: 'queued' });
    expect(started.headers.get('location')).toBe(`/api/runs/${started.body.run_id}`);
    const waited = await call(stack.urls[1]!, key, 'GET', `/api/runs/${started.body.run_id}?wait=30`);
    expect(waited.status).toBe(200);
    expect(waited.body).toMatchObject({ id: started.body.run_id, status: 'succeeded', user_metadata: 'batch-7' });
    expect(waited.body.answer).toContain('84');
    // A final run answers at once, waiting or not.
    expect((await call(stack.urls[0]!, key, 'GET', `/api/runs/${started.body.run_id}?wait=60`)).body.status).toBe('succeeded');
  });

  it('DAG runs too; the same 404, 409 and scope rules as the streaming endpoints', async () => {
    const { key } = await stack.user();
    const dag = await call(stack.url, key, 'POST', '/api/runs', { mode: 'dag', q: 'What is 2+2 and what is 3*3?' });
    expect(dag.status).toBe(202);
    const busy = await call(stack.url, key, 'POST', '/api/runs', { mode: 'react', q: 'again', conversation_id: dag.body.conversation_id });
    expect([202, 409]).toContain(busy.status);
    if (busy.status === 409) expect(busy.body.error).toBe('conversation_busy');
    expect((await call(stack.url, key, 'GET', `/api/runs/${dag.body.run_id}?wait=30`)).body.status).toBe('succeeded');
    const other = await stack.user();
    expect((await call(stack.url, other.key, 'GET', `/api/runs/${dag.body.run_id}?wait=1`)).status).toBe(404);
    expect((await call(stack.url, other.key, 'POST', '/api/runs', { mode: 'react', q: 'x', conversation_id: dag.body.conversation_id })).status).toBe(404);
    const scoped = (await call(stack.url, key, 'POST', '/api/me/api-keys', { name: 'kb', scopes: 'kb' })).body.key;
    expect((await call(stack.url, scoped, 'POST', '/api/runs', { mode: 'react', q: 'x' })).status).toBe(403);
  });

  it('a run nobody takes is answered still queued once the wait is over', async () => {
    const started = await call(idle.url, idleKey, 'POST', '/api/runs', { mode: 'react', q: 'hello' });
    expect(started.status).toBe(202);
    const waited = await call(idle.url, idleKey, 'GET', `/api/runs/${started.body.run_id}?wait=1`);
    expect(waited.status).toBe(200);
    expect(waited.body).toMatchObject({ id: started.body.run_id, status: 'queued' });
  });

  it.each([
    [{ q: 'x' }, 'missing'],
    [{ mode: 'plan', q: 'x' }, 'literal_error'],
    [{ mode: 'react', q: '' }, 'string_too_short'],
    [{ mode: 'react', q: 'x', user_metadata: 42 }, 'string_type'],
    [{ mode: 'react', q: 'x', conversation_id: 'nope' }, 'uuid_parsing'],
    [{ mode: 'react', q: 'x', stream: true }, 'extra_forbidden'],
  ])('refuses %j (%s)', async (body, type) => {
    const res = await call(idle.url, idleKey, 'POST', '/api/runs', body);
    expect(res.status).toBe(422);
    expect(res.body.detail[0].type).toBe(type);
  });

  it.each([['61', 'less_than_equal'], ['-1', 'greater_than_equal'], ['soon', 'int_parsing'], ['1.5', 'int_parsing']])('refuses ?wait=%s (%s)', async (wait, type) => {
    const { key } = await idle.user();
    const res = await call(idle.url, key, 'GET', `/api/runs/${crypto.randomUUID()}?wait=${wait}`);
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['query', 'wait'], type });
  });
});
