import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.js';
import { stream, type ReceivedEvent, type StreamResult } from './support/sse.js';
import { createUser } from '../src/auth/users.js';
import { FIXTURE_PASSWORD_COST, uniqueId } from './support/app.js';
import { Queue } from 'bullmq';
import { RUN_QUEUE } from '../src/shared/jobs.js';

/**
 * Disabling and deleting a user through built processes: two web processes and a worker sharing
 * Postgres and Redis as deployed. The admin acts on one web process; the user's key, JWT and refresh
 * token are refused on the other (where all three were warm in its cache), and their running run is
 * cancelled by the worker (its stream ends with done cancelled). Every run that may still change is
 * cancelled, parked ones (waiting for an approval, or for the client's tool outputs) and queued ones too.
 */
let stack: Stack;
let adminKey: string;
beforeAll(async () => {
  // Slow tokens, so a run is still streaming when the admin acts.
  stack = await startStack({ webs: 2, workers: 1, env: { LOCAL_MODEL_TOKEN_DELAY_MS: '60' } });
  ({ key: adminKey } = await stack.user('admin'));
});
afterAll(() => stack.stop());

const call = async (base: string, method: string, path: string, token?: string, body?: unknown) => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(token && { authorization: `Bearer ${token}` }), ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json().catch(() => undefined) };
};

/** A member with a key, a JWT and a refresh token, all warm on both web processes. */
async function member() {
  const email = `disable-${uniqueId()}@example.test`;
  const password = `pw-${uniqueId()}`;
  const user = await createUser(stack.identity.models, { email, password, passwordCost: FIXTURE_PASSWORD_COST });
  const { key } = await stack.identity.apiKeys.create(user.id, { name: 'k' });
  const login = await call(stack.urls[1]!, 'POST', '/api/auth/login', undefined, { email, password });
  expect(login.status).toBe(200);
  for (const url of stack.urls) for (const token of [key, login.body.access_token]) expect((await call(url, 'GET', '/api/auth/verify', token)).status).toBe(200);
  return { user, key, jwt: login.body.access_token as string, refresh: login.body.refresh_token as string };
}

/** Starts a long run and resolves once it is streaming tokens, with the whole stream's result to come. */
async function runningRun(key: string): Promise<{ runId: string; result: Promise<StreamResult> }> {
  let streaming!: (runId: string) => void;
  const started = new Promise<string>((resolve) => (streaming = resolve));
  let runId = '';
  const result = stream(`${stack.url}/api/react`, {
    token: key,
    body: { q: 'Tell me a long story about nothing in particular, slowly and with many words' },
    onEvent: (e: ReceivedEvent) => {
      if (e.type === 'run') runId = e.data.run_id;
      if (e.type === 'token') streaming(runId);
    },
  });
  return { runId: await started, result };
}

/** Asks until the answer is 401; the cache's own TTL (30 s) is far beyond the wait, so only the invalidation can make it. */
async function until401(url: string, token: string, deadlineMs = 5000) {
  const started = Date.now();
  for (;;) {
    const res = await call(url, 'GET', '/api/auth/verify', token);
    if (res.status === 401 || Date.now() - started > deadlineMs) return { ...res, ms: Date.now() - started };
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('disabling a user', () => {
  it('refuses their key, JWT and refresh token on the other web process at once, and cancels their running run', async () => {
    const m = await member();
    const { runId, result } = await runningRun(m.key);
    const disabled = await call(stack.urls[0]!, 'PATCH', `/api/admin/users/${m.user.id}`, adminKey, { is_active: false });
    expect(disabled.status).toBe(200);
    expect(disabled.body).toMatchObject({ id: m.user.id, is_active: false });

    for (const token of [m.key, m.jwt]) {
      const res = await until401(stack.urls[1]!, token);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'unauthorized', message: 'This user account is disabled' });
      console.log(`disabled user's ${token === m.key ? 'API key' : 'JWT'} refused on the second web process after ${res.ms} ms`);
    }
    const refresh = await call(stack.urls[1]!, 'POST', '/api/auth/refresh', undefined, { refresh_token: m.refresh });
    expect(refresh.status).toBe(401);

    const events = (await result).events;
    expect(events.at(-1)).toMatchObject({ type: 'done', data: { status: 'cancelled' } });
    expect((await stack.knex('runs').where({ id: runId }).first()).status).toBe('cancelled');

    // Enabled again: the key works; the JWT's session was revoked with the disable, so it stays refused.
    expect((await call(stack.urls[0]!, 'PATCH', `/api/admin/users/${m.user.id}`, adminKey, { is_active: true })).status).toBe(200);
    expect((await call(stack.urls[1]!, 'GET', '/api/auth/verify', m.key)).status).toBe(200);
    expect((await call(stack.urls[1]!, 'GET', '/api/auth/verify', m.jwt)).status).toBe(401);
  });
});

describe('deleting a user', () => {
  it('cancels their running run (done cancelled) before removing them and everything they own', async () => {
    const m = await member();
    const { runId, result } = await runningRun(m.key);
    const deleted = await call(stack.urls[1]!, 'DELETE', `/api/admin/users/${m.user.id}`, adminKey);
    expect(deleted.status).toBe(204);
    expect((await result).events.at(-1)).toMatchObject({ type: 'done', data: { status: 'cancelled' } });
    expect(await stack.knex('runs').where({ id: runId }).first()).toBeUndefined();
    expect(await stack.knex('users').where({ id: m.user.id }).first()).toBeUndefined();
    for (const url of stack.urls) for (const token of [m.key, m.jwt]) expect((await until401(url, token)).status).toBe(401);
    const audit = await call(stack.url, 'GET', `/api/admin/audit-log?target_id=${m.user.id}`, adminKey);
    expect(audit.body.items.map((e: { action: string }) => e.action)).toEqual(['user.delete', 'user.disable', 'auth.login']);
  });

  it('an admin cancel of any user’s run is accepted and audited', async () => {
    const m = await member();
    const { runId, result } = await runningRun(m.key);
    const res = await call(stack.urls[1]!, 'POST', `/api/admin/runs/${runId}/cancel`, adminKey);
    expect(res).toEqual({ status: 202, body: { run_id: runId, status: 'cancelling' } });
    expect((await result).events.at(-1)).toMatchObject({ type: 'done', data: { status: 'cancelled' } });
    const audit = await call(stack.url, 'GET', `/api/admin/audit-log?action=run.cancel&target_id=${runId}`, adminKey);
    expect(audit.body.items).toMatchObject([{ action: 'run.cancel', target_type: 'run', details: { user_id: m.user.id } }]);
    // The dashboard's API sees the worker attached to the run queue.
    const queues = await call(stack.url, 'GET', '/api/admin/queues', adminKey);
    expect(queues.body.queues.find((q: { name: string }) => q.name === 'agent-runs').workers).toBeGreaterThanOrEqual(1);
  });
});

const WEATHER = { name: 'get_weather', description: 'The weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

/** Follows a run's events (as an admin: the member's credentials are about to be refused) until it ends. */
const followToEnd = (runId: string) => stream(`${stack.url}/api/admin/runs/${runId}/events`, { method: 'GET', token: adminKey });

/** Resolves once the run's stream shows `status` (the row is written before the event is published). */
async function reaches(key: string, runId: string, status: string): Promise<void> {
  const controller = new AbortController();
  let seen!: () => void;
  const reached = new Promise<void>((resolve) => (seen = resolve));
  const onEvent = (e: ReceivedEvent) => {
    if (e.type === 'status' && e.data.status === status) {
      seen();
      controller.abort();
    }
  };
  const followed = stream(`${stack.url}/api/runs/${runId}/events`, { method: 'GET', token: key, onEvent, signal: controller.signal });
  await Promise.race([reached, followed.then((r) => Promise.reject(new Error(`run ${runId} ended without ${status}: ${JSON.stringify(r.events.at(-1))}`)))]);
}

/**
 * A member's runs in every active status: one parked for its client's tool outputs, one waiting
 * for a person's approval, one running, and one queued behind the running one.
 */
async function runsInEveryActiveStatus(key: string) {
  const started = async (body: Record<string, unknown>) => {
    const res = await call(stack.url, 'POST', '/api/runs', key, body);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    return res.body as { run_id: string; conversation_id: string };
  };
  const clientTools = await started({ mode: 'react', q: 'Ask get_weather for Rome', client_tools: [WEATHER] });
  const gated = await call(stack.url, 'POST', '/api/agents', key, { name: 'careful', tool_approval: ['calculator'] });
  expect(gated.status).toBe(201);
  const approval = await started({ mode: 'react', q: 'What is 6*7?', agent_id: gated.body.id });
  const running = await runningRun(key);
  const conversation = (await call(stack.url, 'GET', `/api/runs/${running.runId}`, key)).body.conversation_id;
  const queued = await started({ mode: 'react', q: 'What is 2+2?', conversation_id: conversation, multitask_strategy: 'enqueue' });
  await Promise.all([reaches(key, clientTools.run_id, 'requires_action'), reaches(key, approval.run_id, 'waiting')]);
  expect((await call(stack.url, 'GET', `/api/runs/${queued.run_id}`, key)).body.status).toBe('queued');
  return { requiresAction: clientTools.run_id, waiting: approval.run_id, running: running.runId, queued: queued.run_id };
}

describe('disabling or deleting a user cancels every run that may still change', () => {
  let queue: Queue;
  beforeAll(() => {
    queue = new Queue(RUN_QUEUE, { connection: stack.redis, prefix: stack.identity.keys.bullPrefix(RUN_QUEUE) });
  });
  afterAll(() => queue.close());

  it('disable: parked, running and queued runs all end cancelled at once (the queued one is woken, not left to its recheck)', async () => {
    const m = await member();
    const runs = await runsInEveryActiveStatus(m.key);
    const ends = Object.values(runs).map(followToEnd);
    expect((await call(stack.url, 'PATCH', `/api/admin/users/${m.user.id}`, adminKey, { is_active: false })).status).toBe(200);
    // The queued run's job no longer sleeps out its 30 s recheck: the disable woke it.
    expect(await queue.getJobState(runs.queued)).not.toBe('delayed');
    for (const ended of await Promise.all(ends)) expect(ended.events.at(-1)).toMatchObject({ type: 'done', data: { status: 'cancelled' } });

    // Enabled again, the member reads each run as cancelled.
    expect((await call(stack.url, 'PATCH', `/api/admin/users/${m.user.id}`, adminKey, { is_active: true })).status).toBe(200);
    for (const runId of Object.values(runs)) expect((await call(stack.url, 'GET', `/api/runs/${runId}`, m.key)).body).toMatchObject({ id: runId, status: 'cancelled' });
  });

  it('delete: parked runs end cancelled (their streams end done cancelled) before the user and their runs are removed', async () => {
    const m = await member();
    const runs = await runsInEveryActiveStatus(m.key);
    const ends = Object.values(runs).map(followToEnd);
    expect((await call(stack.url, 'DELETE', `/api/admin/users/${m.user.id}`, adminKey)).status).toBe(204);
    for (const ended of await Promise.all(ends)) expect(ended.events.at(-1)).toMatchObject({ type: 'done', data: { status: 'cancelled' } });
    expect(await stack.knex('runs').whereIn('id', Object.values(runs))).toEqual([]);
  });
});
