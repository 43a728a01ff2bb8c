import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.js';
import { ofType, stream, type ReceivedEvent } from './support/sse.js';
import { RUN_QUEUE } from '../src/shared/jobs.js';
import { SINGLE_REDIS, redisEnv, type RedisMode } from './support/redis-modes.js';

/**
 * Reading, rejoining and cancelling runs, the per-user cap and the crash limit, through built
 * processes; rejoining and cancelling on a single Redis and on a three-node cluster.
 */
const stacks = {} as Record<RedisMode, { stack: Stack; key: string; otherKey: string }>;
let stack: Stack;
let key: string;
let otherKey: string;
beforeAll(async () => {
  await Promise.all(
    SINGLE_REDIS.map(async (mode) => {
      // Slow tokens, so a run is still streaming when the test acts on it.
      const started = await startStack({ env: { LOCAL_MODEL_TOKEN_DELAY_MS: '40', ...redisEnv(mode) } });
      stacks[mode] = { stack: started, key: (await started.user()).key, otherKey: (await started.user()).key };
    }),
  );
});
afterAll(() => Promise.all(Object.values(stacks).map(({ stack }) => stack.stop())));

/** The describe's tests act on the stack of that Redis mode. */
const on = (mode: RedisMode) =>
  beforeAll(() => {
    ({ stack, key, otherKey } = stacks[mode]);
  });

const call = (method: string, path: string, token: string, headers: Record<string, string> = {}) =>
  fetch(`${stack.url}${path}`, { method, headers: { authorization: `Bearer ${token}`, ...headers } }).then(async (res) => ({
    status: res.status,
    headers: res.headers,
    body: await res.json().catch(() => undefined),
  }));

const events = (runId: string, token: string, headers: Record<string, string> = {}, query = '') =>
  stream(`${stack.url}/api/runs/${runId}/events${query}`, { method: 'GET', token, headers });

const ids = (list: ReceivedEvent[]) => list.map((e) => e.id);

describe('GET /api/runs/{id}', () => {
  on('single');
  it('reads the run for its owner; 404 for anyone else; 422 for a malformed id', async () => {
    const res = await stream(`${stack.url}/api/react`, { token: key, body: { q: 'What is 6*7?' } });
    const runId = res.headers.get('x-run-id')!;
    const own = await call('GET', `/api/runs/${runId}`, key);
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ id: runId, status: 'succeeded', mode: 'react', query: 'What is 6*7?', error: null });
    expect(own.body.answer).toContain('42');
    expect(own.body).not.toHaveProperty('user_id');
    expect(own.body).not.toHaveProperty('checkpoint');
    expect((await call('GET', `/api/runs/${runId}`, otherKey)).status).toBe(404);
    expect((await call('GET', `/api/runs/${crypto.randomUUID()}`, key)).status).toBe(404);
    const bad = await call('GET', '/api/runs/not-a-uuid', key);
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['path', 'id']);
  });
});

describe('GET /api/runs/{id}/events', () => {
  on('single');
  it('replays a finished run from the start, after Last-Event-ID, or after ?after=', async () => {
    const live = await stream(`${stack.url}/api/react`, { token: key, body: { q: 'What is 3*3?' } });
    const runId = live.headers.get('x-run-id')!;
    const replay = await events(runId, key);
    expect(replay.status).toBe(200);
    expect(ids(replay.events)).toEqual(ids(live.events));
    expect(replay.events.map((e) => e.type)).toEqual(live.events.map((e) => e.type));
    const cut = 3;
    const rest = await events(runId, key, { 'Last-Event-ID': live.events[cut - 1]!.id });
    expect(ids(rest.events)).toEqual(ids(live.events.slice(cut)));
    const after = await events(runId, key, {}, `?after=${live.events[cut]!.id}`);
    expect(ids(after.events)).toEqual(ids(live.events.slice(cut + 1)));
  });
});

describe.each(SINGLE_REDIS)('on a %s Redis', (mode) => {
  on(mode);

  describe('GET /api/runs/{id}/events', () => {
    it('joins a run mid-stream and continues live to done, exactly once per event', async () => {
      let runId = '';
      let joined: Promise<Awaited<ReturnType<typeof events>>> | undefined;
      const live = await stream(`${stack.url}/api/react`, {
        token: key,
        body: { q: 'What is 5*5?' },
        onEvent: (e) => {
          if (e.type === 'run') runId = e.data.run_id;
          if (e.type === 'token' && !joined) joined = events(runId, key, { 'Last-Event-ID': e.id });
        },
      });
      const rest = await joined!;
      const at = live.events.findIndex((e) => e.type === 'token');
      expect(ids(rest.events)).toEqual(ids(live.events.slice(at + 1)));
      expect(rest.events.at(-1)!.type).toBe('done');
    });

    it('joins a queued run and follows it once a worker takes it', async () => {
      const paused = await startStack({ workers: 0, env: redisEnv(mode) });
      try {
        const { key: pausedKey } = await paused.user();
        const controller = new AbortController();
        const first = stream(`${paused.url}/api/react`, { token: pausedKey, body: { q: 'What is 2*21?' }, signal: controller.signal, onEvent: () => controller.abort() });
        const runId = (await first).headers.get('x-run-id')!;
        expect((await call('GET', `/api/runs/${runId}`, key)).status).toBe(404);
        const joined = stream(`${paused.url}/api/runs/${runId}/events`, { method: 'GET', token: pausedKey });
        await paused.startWorker();
        const result = await joined;
        expect(result.events[0]!.type).toBe('run');
        expect(ofType(result.events, 'answer')[0]!.data.content).toContain('42');
        expect(result.events.at(-1)!.type).toBe('done');
      } finally {
        await paused.stop();
      }
    });
  });

  describe('POST /api/runs/{id}/cancel', () => {
    it('202 mid-run: the run stops and ends with done cancelled; a second cancel → 409; others → 404', async () => {
      let runId = '';
      let cancelled: Promise<Awaited<ReturnType<typeof call>>> | undefined;
      const res = await stream(`${stack.url}/api/react`, {
        token: key,
        body: { q: 'Tell me a long story about nothing in particular' },
        onEvent: (e) => {
          if (e.type === 'run') runId = e.data.run_id;
          if (e.type === 'token' && !cancelled) cancelled = call('POST', `/api/runs/${runId}/cancel`, key);
        },
      });
      const accepted = await cancelled!;
      expect(accepted.status).toBe(202);
      expect(accepted.body).toEqual({ run_id: runId, status: 'cancelling' });
      expect(res.events.at(-1)!).toMatchObject({ type: 'done', data: { status: 'cancelled' } });
      expect(ofType(res.events, 'answer')).toHaveLength(0);
      const row = await stack.knex('runs').where({ id: runId }).first();
      expect(row.status).toBe('cancelled');
      expect(await stack.knex('messages').where({ run_id: runId, role: 'assistant' })).toHaveLength(0);
      const again = await call('POST', `/api/runs/${runId}/cancel`, key);
      expect(again.status).toBe(409);
      expect(again.body.error).toBe('no_active_execution');
      expect((await call('POST', `/api/runs/${runId}/cancel`, otherKey)).status).toBe(404);
      // The conversation is free again.
      const next = await stream(`${stack.url}/api/react`, { token: key, body: { q: 'What is 1+1?', conversation_id: res.headers.get('x-conversation-id') } });
      expect(ofType(next.events, 'done')[0]!.data.status).toBe('succeeded');
    });

    it('cancelling a finished run → 409 no_active_execution', async () => {
      const res = await stream(`${stack.url}/api/react`, { token: key, body: { q: 'hi' } });
      const finished = await call('POST', `/api/runs/${res.headers.get('x-run-id')}/cancel`, key);
      expect(finished.status).toBe(409);
      expect(finished.body.error).toBe('no_active_execution');
    });

    it('a queued run cancelled before any worker takes it never runs the model', async () => {
      const paused = await startStack({ workers: 0, env: redisEnv(mode) });
      try {
        const { key: pausedKey } = await paused.user();
        const controller = new AbortController();
        const first = await stream(`${paused.url}/api/react`, { token: pausedKey, body: { q: 'What is 9*9?' }, signal: controller.signal, onEvent: () => controller.abort() });
        const runId = first.headers.get('x-run-id')!;
        const res = await fetch(`${paused.url}/api/runs/${runId}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${pausedKey}` } });
        expect(res.status).toBe(202);
        const joined = stream(`${paused.url}/api/runs/${runId}/events`, { method: 'GET', token: pausedKey });
        await paused.startWorker();
        const result = await joined;
        expect(result.events.map((e) => e.type)).toEqual(['run', 'done']);
        expect(ofType(result.events, 'done')[0]!.data.status).toBe('cancelled');
      } finally {
        await paused.stop();
      }
    });
  });
});

describe('GET /api/runs/{id}/events of a finished run', () => {
  on('single');

  it('410 once a finished run\'s stream has expired; 422 for a malformed Last-Event-ID or after; 404 for others', async () => {
    const live = await stream(`${stack.url}/api/react`, { token: key, body: { q: 'hello' } });
    const runId = live.headers.get('x-run-id')!;
    expect((await call('GET', `/api/runs/${runId}/events`, otherKey)).status).toBe(404);
    const badHeader = await call('GET', `/api/runs/${runId}/events`, key, { 'Last-Event-ID': 'yesterday' });
    expect(badHeader.status).toBe(422);
    expect(badHeader.body.detail[0].loc).toEqual(['header', 'last-event-id']);
    const badQuery = await call('GET', `/api/runs/${runId}/events?after=1-2-3`, key);
    expect(badQuery.status).toBe(422);
    expect(badQuery.body.detail[0].loc).toEqual(['query', 'after']);
    // Expiry is Redis's TTL after done; removing the stream is what that TTL does.
    const { user_id: userId } = await stack.knex('runs').where({ id: runId }).first();
    await stack.redis.del(stack.identity.keys.runEvents({ id: runId, userId }));
    const gone = await call('GET', `/api/runs/${runId}/events`, key);
    expect(gone.status).toBe(410);
    expect(gone.body).toMatchObject({ error: 'gone', message: expect.stringContaining(`/api/runs/${runId}`), status: 'succeeded' });
    expect((await call('GET', `/api/runs/${runId}`, key)).body.status).toBe('succeeded');
  });

  it('resumed after its last event, a finished run\'s stream opens and ends at once (headers first)', async () => {
    const live = await stream(`${stack.url}/api/react`, { token: key, body: { q: 'hello' } });
    const runId = live.headers.get('x-run-id')!;
    const done = live.events.at(-1)!;
    expect(done.type).toBe('done');
    const resumed = await stream(`${stack.url}/api/runs/${runId}/events`, { method: 'GET', token: key, headers: { 'Last-Event-ID': done.id } });
    expect(resumed.status).toBe(200);
    expect(resumed.events).toEqual([]);
    expect(resumed.comments).toContain('open');
    const before = live.events.at(-2)!;
    const last = await stream(`${stack.url}/api/runs/${runId}/events?after=${before.id}`, { method: 'GET', token: key });
    expect(last.events.map((e) => e.type)).toEqual(['done']);
  });

  it('a finished run\'s stream carries an expiry', async () => {
    const live = await stream(`${stack.url}/api/react`, { token: key, body: { q: 'hi' } });
    const { id, user_id: userId } = await stack.knex('runs').where({ id: live.headers.get('x-run-id')! }).first();
    const ttl = await stack.redis.ttl(stack.identity.keys.runEvents({ id, userId }));
    expect(ttl).toBeGreaterThan(3000);
    expect(ttl).toBeLessThanOrEqual(3600);
  });
});

describe('limits and failure paths', () => {
  on('single');
  it('caps a user\'s concurrently active runs → 429 rate_limited with Retry-After, and frees the slot when one ends', async () => {
    const capped = await startStack({ workers: 0, env: { RUNS_PER_USER_LIMIT: '2' } });
    try {
      const { key: cappedKey, user: cappedUser } = await capped.user();
      const { key: neighbourKey } = await capped.user();
      const open = async (token: string) => {
        const controller = new AbortController();
        return stream(`${capped.url}/api/react`, { token, body: { q: 'What is 4*4?' }, signal: controller.signal, onEvent: () => controller.abort() });
      };
      const first = await open(cappedKey);
      await open(cappedKey);
      const third = await open(cappedKey);
      expect(third.status).toBe(429);
      expect(third.body).toEqual({ error: 'rate_limited', message: expect.stringContaining('2 active runs') });
      expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await open(neighbourKey)).status).toBe(200);
      // Refused before anything was stored.
      expect(await capped.knex('runs').where({ user_id: cappedUser.id }).count('* as n').first()).toEqual({ n: '2' });
      const cancel = await fetch(`${capped.url}/api/runs/${first.headers.get('x-run-id')}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${cappedKey}` } });
      expect(cancel.status).toBe(202);
      const joined = stream(`${capped.url}/api/runs/${first.headers.get('x-run-id')}/events`, { method: 'GET', token: cappedKey });
      await capped.startWorker();
      await joined;
      expect((await open(cappedKey)).status).toBe(200);
    } finally {
      await capped.stop();
    }
  });

  it('a run whose worker keeps dying fails for good: error + done failed, conversation freed', async () => {
    const crashing = await startStack({ workers: 0, env: { RUN_MAX_CRASHES: '1' } });
    try {
      const { key: crashKey } = await crashing.user();
      const controller = new AbortController();
      const first = await stream(`${crashing.url}/api/react`, { token: crashKey, body: { q: 'What is 8*8?' }, signal: controller.signal, onEvent: () => controller.abort() });
      const runId = first.headers.get('x-run-id')!;
      const conversationId = first.headers.get('x-conversation-id')!;
      // The run as two workers that took it and then died leave it: the row running, the job's stalled count at 2.
      await crashing.knex('runs').where({ id: runId }).update({ status: 'running', attempt: 2, crashes: 1 });
      await crashing.redis.hset(`${crashing.identity.keys.bullPrefix(RUN_QUEUE)}:${RUN_QUEUE}:${runId}`, 'stc', 2, 'ats', 2);
      const joined = stream(`${crashing.url}/api/runs/${runId}/events`, { method: 'GET', token: crashKey });
      await crashing.startWorker();
      const result = await joined;
      expect(ofType(result.events, 'error')[0]!.data).toMatchObject({ code: 'worker_crashed', retryable: true });
      expect(result.events.at(-1)).toMatchObject({ type: 'done', data: { status: 'failed' } });
      expect(ofType(result.events, 'tool_call')).toHaveLength(0);
      expect(await crashing.knex('runs').where({ id: runId }).first()).toMatchObject({ status: 'failed', error: { code: 'worker_crashed' } });
      const inject = await fetch(`${crashing.url}/api/chat/inject`, {
        method: 'POST',
        headers: { authorization: `Bearer ${crashKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ conversation_id: conversationId, content: 'still there?' }),
      });
      expect(inject.status).toBe(409);
      const again = await stream(`${crashing.url}/api/react`, { token: crashKey, body: { q: 'What is 8*8?', conversation_id: conversationId } });
      expect(ofType(again.events, 'answer')[0]!.data.content).toContain('64');
    } finally {
      await crashing.stop();
    }
  });
});
