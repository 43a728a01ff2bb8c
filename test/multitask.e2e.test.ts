import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { politely } from './support/retry.js';
import { startStack, type Stack } from './support/stack.js';
import { ofType, stream, type ReceivedEvent } from './support/sse.js';

/**
 * multitask_strategy (DESIGN §19): what a second message does while a run is active, against built
 * processes (one web, two workers). A slow local model keeps runs open long enough to race them.
 */
let stack: Stack;
let key: string;
let other: string;

beforeAll(async () => {
  stack = await startStack({ workers: 2, env: { LOCAL_MODEL_TOKEN_DELAY_MS: '25', RUNS_PER_USER_LIMIT: '40' } });
  key = (await stack.user()).key;
  other = (await stack.user()).key;
});
afterAll(() => stack.stop());

const background = (body: Record<string, unknown>, token = key) => stack.api(token, 'POST', '/api/runs', { mode: 'react', ...body });
const finalRun = async (runId: string) => (await stack.api(key, 'GET', `/api/runs/${runId}?wait=30`)).body;
const history = (conversationId: string) =>
  stack.knex('messages').where({ conversation_id: conversationId }).orderBy('seq').select('role', 'content', 'run_id', 'injected');

/** Follows a run's events until `until` says stop (or the run is done). */
async function follow(runId: string, until: (event: ReceivedEvent) => boolean): Promise<ReceivedEvent[]> {
  const controller = new AbortController();
  const result = await stream(`${stack.url}/api/runs/${runId}/events`, {
    method: 'GET',
    token: key,
    signal: controller.signal,
    onEvent: (event) => {
      if (until(event)) controller.abort();
    },
  });
  return result.events;
}
const firstToken = (runId: string) => follow(runId, (e) => e.type === 'token');

/** A run that answers slowly (the local model streams its answer a token at a time). */
async function startSlowRun(conversationId?: string): Promise<{ runId: string; conversationId: string }> {
  const res = await background({ q: 'Tell me about the weather in a long sentence please', ...(conversationId ? { conversation_id: conversationId } : {}) });
  expect(res.status).toBe(202);
  return { runId: res.body.run_id, conversationId: res.body.conversation_id };
}

const runRows = (conversationId: string) =>
  stack.knex('runs').where({ conversation_id: conversationId }).orderBy('created_at').select('id', 'status', 'started_at', 'finished_at', 'answer');

describe('multitask_strategy', () => {
  it('an unknown strategy → 422 naming it on /api/react, /api/dag and POST /api/runs; nothing is stored', async () => {
    const before = await stack.knex('runs').count({ n: '*' }).first();
    for (const path of ['/api/react', '/api/dag']) {
      const res = await stack.api(key, 'POST', path, { q: 'hi', multitask_strategy: 'queue' });
      expect(res.status).toBe(422);
      expect(JSON.stringify(res.body)).toContain('multitask_strategy');
    }
    for (const strategy of ['queue', 7, true, '', 'ENQUEUE']) {
      const res = await background({ q: 'hi', multitask_strategy: strategy });
      expect(res.status).toBe(422);
    }
    expect(await stack.knex('runs').count({ n: '*' }).first()).toEqual(before);
  });

  it('reject (the default, and null) → 409 conversation_busy while a run is active', async () => {
    const { runId, conversationId } = await startSlowRun();
    for (const multitask_strategy of [undefined, null, 'reject']) {
      const res = await background({ q: 'again', conversation_id: conversationId, multitask_strategy });
      expect(res.status).toBe(409);
      expect(res.body.error).toBe('conversation_busy');
    }
    expect((await finalRun(runId)).status).toBe('succeeded');
  });

  it('enqueue: accepted at once, its stream opens with run status queued, it starts only after the active run is done, and sees its answer', async () => {
    const first = await startSlowRun();
    await firstToken(first.runId);
    const second = await stream(`${stack.url}/api/react`, { token: key, body: { q: 'What is 6*7?', conversation_id: first.conversationId, multitask_strategy: 'enqueue' } });
    expect(second.status).toBe(200);
    expect(second.events[0]).toMatchObject({ type: 'run', data: { status: 'queued', conversation_id: first.conversationId } });
    expect(ofType(second.events, 'done')[0]!.data.status).toBe('succeeded');
    const [a, b] = await runRows(first.conversationId);
    expect(a!.status).toBe('succeeded');
    expect(b!.started_at.getTime()).toBeGreaterThanOrEqual(a!.finished_at.getTime());
    // The queued question comes after the answer it waited for.
    expect((await history(first.conversationId)).map((m) => [m.role, m.run_id])).toEqual([
      ['user', a!.id],
      ['assistant', a!.id],
      ['user', b!.id],
      ['assistant', b!.id],
    ]);
  });

  it('enqueue: runs start in the order they were sent; at most RUN_QUEUE_PER_CONVERSATION wait (the 11th → 429 with Retry-After)', async () => {
    const first = await startSlowRun();
    const queued: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await background({ q: `What is ${i}+1?`, conversation_id: first.conversationId, multitask_strategy: 'enqueue' });
      expect(res.status).toBe(202);
      queued.push(res.body.run_id);
    }
    const refused = await fetch(`${stack.url}/api/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'react', q: 'one too many', conversation_id: first.conversationId, multitask_strategy: 'enqueue' }),
    });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await refused.json()).message).toContain('RUN_QUEUE_PER_CONVERSATION');
    // Cancel the active run: the queue goes on without it, in order, one at a time.
    expect((await stack.api(key, 'POST', `/api/runs/${first.runId}/cancel`)).status).toBe(202);
    const finals = [];
    for (const id of queued) finals.push(await finalRun(id));
    expect(finals.map((r) => r.status)).toEqual(queued.map(() => 'succeeded'));
    const rows = (await runRows(first.conversationId)).slice(1);
    for (let i = 1; i < rows.length; i++) expect(rows[i]!.started_at.getTime()).toBeGreaterThanOrEqual(rows[i - 1]!.finished_at.getTime());
    const questions = (await history(first.conversationId)).filter((m) => m.role === 'user').map((m) => m.content);
    expect(questions.slice(1)).toEqual(queued.map((_, i) => `What is ${i}+1?`));
  }, 60_000);

  it('interrupt: the active run ends interrupted keeping what it said, in the history before the new question', async () => {
    const first = await startSlowRun();
    await firstToken(first.runId);
    const second = await background({ q: 'What is 6*7?', conversation_id: first.conversationId, multitask_strategy: 'interrupt' });
    expect(second.status).toBe(202);
    const a = await finalRun(first.runId);
    expect(a.status).toBe('interrupted');
    expect(a.answer).toBeTruthy();
    const firstEvents = await follow(first.runId, () => false);
    const said = ofType(firstEvents, 'token').map((e) => e.data.text).join('');
    expect(said.startsWith(a.answer)).toBe(true);
    expect(ofType(firstEvents, 'done')[0]!.data.status).toBe('interrupted');
    expect((await finalRun(second.body.run_id)).status).toBe('succeeded');
    expect((await history(first.conversationId)).map((m) => [m.role, m.run_id, m.role === 'assistant' && m.run_id === first.runId ? m.content : ''])).toEqual([
      ['user', first.runId, ''],
      ['assistant', first.runId, a.answer],
      ['user', second.body.run_id, ''],
      ['assistant', second.body.run_id, ''],
    ]);
  });

  it('rollback: the active run is cancelled and its question leaves the history before the new run starts', async () => {
    const first = await startSlowRun();
    await firstToken(first.runId);
    const second = await background({ q: 'What is 6*7?', conversation_id: first.conversationId, multitask_strategy: 'rollback' });
    expect(second.status).toBe(202);
    expect((await finalRun(first.runId)).status).toBe('cancelled');
    expect((await finalRun(second.body.run_id)).status).toBe('succeeded');
    expect((await history(first.conversationId)).map((m) => [m.role, m.run_id])).toEqual([
      ['user', second.body.run_id],
      ['assistant', second.body.run_id],
    ]);
  });

  it('a strategy on a conversation with no active run starts at once; another user’s conversation → 404', async () => {
    for (const multitask_strategy of ['enqueue', 'interrupt', 'rollback']) {
      const res = await stream(`${stack.url}/api/react`, { token: key, body: { q: 'hi', multitask_strategy } });
      expect(ofType(res.events, 'done')[0]!.data.status).toBe('succeeded');
    }
    const mine = await startSlowRun();
    const res = await background({ q: 'hi', conversation_id: mine.conversationId, multitask_strategy: 'interrupt' }, other);
    expect(res.status).toBe(404);
    expect((await finalRun(mine.runId)).status).toBe('succeeded');
  });

  it('a queued run cancelled while it waits ends cancelled without running; the queue goes on', async () => {
    const first = await startSlowRun();
    const second = await background({ q: 'skip me', conversation_id: first.conversationId, multitask_strategy: 'enqueue' });
    const third = await background({ q: 'What is 6*7?', conversation_id: first.conversationId, multitask_strategy: 'enqueue' });
    expect((await stack.api(key, 'POST', `/api/runs/${second.body.run_id}/cancel`)).status).toBe(202);
    const cancelled = await finalRun(second.body.run_id);
    expect(cancelled).toMatchObject({ status: 'cancelled', usage: expect.anything() });
    expect((await finalRun(first.runId)).status).toBe('succeeded');
    expect((await finalRun(third.body.run_id)).status).toBe('succeeded');
    // Cancelled before it started: it never ran (no model call), and it cannot be cancelled twice.
    expect(cancelled.usage.total_tokens ?? 0).toBe(0);
    expect((await stack.api(key, 'POST', `/api/runs/${second.body.run_id}/cancel`)).status).toBe(409);
  });

  it('races: injects, cancels and every strategy sent at once never run two runs of a conversation together, and every inject answered 200 is absorbed', async () => {
    const first = await startSlowRun();
    await firstToken(first.runId);
    const strategies = ['enqueue', 'interrupt', 'enqueue', 'rollback', 'enqueue', 'interrupt'];
    const injects = Array.from({ length: 6 }, (_, i) => `note ${i}`);
    const sent = await Promise.all([
      ...strategies.map((multitask_strategy, i) => background({ q: `What is ${i}*2?`, conversation_id: first.conversationId, multitask_strategy })),
      ...injects.map((content) => stack.api(key, 'POST', '/api/chat/inject', { conversation_id: first.conversationId, content })),
    ]);
    const runs = sent.slice(0, strategies.length);
    expect(runs.map((r) => r.status)).toEqual(strategies.map(() => 202));
    // Cancel one of the queued runs while the others go.
    await stack.api(key, 'POST', `/api/runs/${runs[2]!.body.run_id}/cancel`);
    const ids = [first.runId, ...runs.map((r) => r.body.run_id as string)];
    const finals = await Promise.all(ids.map(finalRun));
    expect(finals.every((r) => ['succeeded', 'cancelled', 'interrupted'].includes(r.status))).toBe(true);
    const eventsOf = new Map<string, ReceivedEvent[]>();
    for (const id of ids) eventsOf.set(id, await follow(id, () => false));
    // The runs that ran (a run cancelled while it waited ends without a `status: running`, doing nothing).
    const ran = new Set(ids.filter((id) => ofType(eventsOf.get(id)!, 'status').length > 0));
    const rows = (await runRows(first.conversationId)).filter((r) => ran.has(r.id)).sort((x, y) => x.started_at - y.started_at);
    for (let i = 1; i < rows.length; i++) expect(rows[i]!.started_at.getTime()).toBeGreaterThanOrEqual(rows[i - 1]!.finished_at.getTime());
    // An inject is accepted (200) or refused with nothing stored (409), never anything else.
    expect(sent.slice(strategies.length).map((r) => r.status).filter((status) => status !== 200 && status !== 409)).toEqual([]);
    const accepted = sent.slice(strategies.length).flatMap((r, i) => (r.status === 200 ? [injects[i]!] : []));
    const absorbed = new Set<string>();
    for (const id of ids) for (const e of ofType(eventsOf.get(id)!, 'injected')) absorbed.add(e.data.content);
    expect([...absorbed].sort()).toEqual(accepted.sort());
    // Nothing is left behind in Redis for the conversation.
    const leftover = await stack.redis.keys(`${stack.env.REDIS_KEY_PREFIX}conv:${first.conversationId}:*`);
    expect(leftover).toEqual([]);
  }, 60_000);
});

describe('multitask_strategy across a worker crash', () => {
  it('a worker killed while the active run streams: the run resumes, the queued runs still start after it, once each', async () => {
    const crashStack = await startStack({ workers: 1, env: { LOCAL_MODEL_TOKEN_DELAY_MS: '25', RUNS_PER_USER_LIMIT: '40', JOB_LOCK_MS: '2000', JOB_STALLED_INTERVAL_MS: '1000' } });
    try {
      const { key: crashKey } = await crashStack.user();
      const api = (method: string, path: string, body?: unknown) => crashStack.api(crashKey, method, path, body);
      // The stack has just booted: its first request is sent as a client that retries a 429, and must start the run.
      const started = await politely(() => api('POST', '/api/runs', { mode: 'react', q: 'Tell me about the weather in a long sentence please' }));
      expect(started.status, JSON.stringify(started.body)).toBe(202);
      const first = started.body;
      const queued = [];
      for (let i = 0; i < 2; i++) queued.push((await api('POST', '/api/runs', { mode: 'react', q: `What is ${i}+5?`, conversation_id: first.conversation_id, multitask_strategy: 'enqueue' })).body);
      const controller = new AbortController();
      await stream(`${crashStack.url}/api/runs/${first.run_id}/events`, {
        method: 'GET',
        token: crashKey,
        signal: controller.signal,
        onEvent: (e) => {
          if (e.type === 'token' && !controller.signal.aborted) {
            crashStack.workers[0]!.child.kill('SIGKILL');
            controller.abort();
          }
        },
      });
      await crashStack.startWorker();
      const finals = await Promise.all([first, ...queued].map(async (r) => (await api('GET', `/api/runs/${r.run_id}?wait=60`)).body));
      expect(finals.map((r) => r.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
      const rows = await crashStack.knex('runs').where({ conversation_id: first.conversation_id }).orderBy('started_at').select('id', 'started_at', 'finished_at');
      expect(rows.map((r) => r.id)).toEqual([first.run_id, ...queued.map((q) => q.run_id)]);
      for (let i = 1; i < rows.length; i++) expect(rows[i]!.started_at.getTime()).toBeGreaterThanOrEqual(rows[i - 1]!.finished_at.getTime());
      const answers = await crashStack.knex('messages').where({ conversation_id: first.conversation_id, role: 'assistant' }).count({ n: '*' }).first();
      expect(Number(answers!.n)).toBe(3);
    } finally {
      await crashStack.stop();
    }
  }, 90_000);
});
