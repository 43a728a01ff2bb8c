import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Cluster } from 'ioredis';
import { startStack, type Stack } from './support/stack.js';
import { REDIS_MODES, redisEnv, type RedisMode } from './support/redis-modes.js';
import { ofType, stream, type ReceivedEvent } from './support/sse.js';
import { EVENT_TYPES } from '../src/shared/events.js';

/** End to end: built web + worker processes, real Redis (single and a three-node cluster), Postgres, BullMQ, HTTP and SSE. */
const stacks = {} as Record<RedisMode, { stack: Stack; key: string }>;
let stack: Stack;
let key: string;
beforeAll(async () => {
  await Promise.all(
    REDIS_MODES.map(async (mode) => {
      const started = await startStack({ env: redisEnv(mode) });
      stacks[mode] = { stack: started, key: (await started.user()).key };
    }),
  );
  ({ stack, key } = stacks.single);
});
afterAll(() => Promise.all(Object.values(stacks).map(({ stack }) => stack.stop())));

const post = (path: string, token: string | undefined, body: unknown) =>
  fetch(`${stack.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  }).then(async (res) => ({ status: res.status, body: await res.json().catch(() => undefined) }));

/** Per iteration, types follow the event table's order; run first, done last, answer just before done. */
function expectTableOrder(events: ReceivedEvent[]) {
  expect(events[0]!.type).toBe('run');
  expect(events.at(-1)!.type).toBe('done');
  expect(events.filter((e) => e.type === 'done')).toHaveLength(1);
  const byIteration = new Map<number, number[]>();
  for (const e of events) {
    if ('iteration' in e.data && e.type !== 'injected') {
      const list = byIteration.get(e.data.iteration) ?? [];
      list.push(EVENT_TYPES.indexOf(e.type));
      byIteration.set(e.data.iteration, list);
    }
  }
  for (const order of byIteration.values()) expect(order).toEqual([...order].sort((a, b) => a - b));
  const ids = events.map((e) => e.id);
  expect(new Set(ids).size).toBe(ids.length);
}

describe.each(REDIS_MODES)('on a %s Redis', (mode) => {
  let stack: Stack;
  let key: string;
  beforeAll(() => {
    ({ stack, key } = stacks[mode]);
  });

  describe('ReAct', () => {
    it('"What is 12*7?" streams a calculator call and an answer with 84, all persisted', async () => {
      const res = await stream(`${stack.url}/api/react`, { token: key, body: { q: 'What is 12*7?' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/event-stream');
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(res.headers.get('x-accel-buffering')).toBe('no');
      const runId = res.headers.get('x-run-id')!;
      const conversationId = res.headers.get('x-conversation-id')!;
      expectTableOrder(res.events);
      expect(res.events.map((e) => e.type)).toEqual(expect.arrayContaining(['run', 'status', 'thought', 'tool_call', 'tool_result', 'token', 'answer', 'done']));
      const [call] = ofType(res.events, 'tool_call');
      expect(call!.data).toMatchObject({ name: 'calculator', arguments: { expression: '12*7' } });
      expect(ofType(res.events, 'tool_result')[0]!.data).toMatchObject({ call_id: call!.data.call_id, output: 84, is_error: false });
      const tokens = ofType(res.events, 'token').map((e) => e.data.text).join('');
      const answer = ofType(res.events, 'answer')[0]!.data;
      expect(answer.content).toContain('84');
      expect(tokens).toBe(answer.content);
      expect(ofType(res.events, 'done')[0]!.data.status).toBe('succeeded');
      expect(ofType(res.events, 'run')[0]!.data).toEqual({ run_id: runId, conversation_id: conversationId, agent_id: null, mode: 'react', status: 'queued', trace_id: null });

      const run = await stack.knex('runs').where({ id: runId }).first();
      expect(run).toMatchObject({ status: 'succeeded', mode: 'react', query: 'What is 12*7?', answer: answer.content });
      expect(run.usage.total_tokens).toBeGreaterThan(0);
      const messages = await stack.knex('messages').where({ conversation_id: conversationId }).orderBy('seq');
      expect(messages.map((m) => [m.role, m.content])).toEqual([
        ['user', 'What is 12*7?'],
        ['assistant', answer.content],
      ]);
      expect(messages[1].id).toBe(answer.message_id);
    });

    it('continues a conversation; a second run while one is active → 409 conversation_busy', async () => {
      const first = await stream(`${stack.url}/api/react`, { token: key, body: { q: 'hello' } });
      const conversationId = first.headers.get('x-conversation-id')!;
      const second = await stream(`${stack.url}/api/react`, { token: key, body: { q: 'What is 2^10?', conversation_id: conversationId } });
      expect(ofType(second.events, 'answer')[0]!.data.content).toContain('1024');
      // Hold the conversation with a run that is still queued: no worker reads this stack's queue yet.
      const paused = await startStack({ workers: 0, env: redisEnv(mode) });
      try {
        const { key: pausedKey } = await paused.user();
        const controller = new AbortController();
        const opened = new Promise<string>((resolve) => {
          void stream(`${paused.url}/api/react`, { token: pausedKey, body: { q: 'wait' }, signal: controller.signal, onEvent: (e) => e.type === 'run' && resolve(e.data.conversation_id) }).catch(() => {});
        });
        const busyConversation = await opened;
        const busy = await stream(`${paused.url}/api/react`, { token: pausedKey, body: { q: 'again', conversation_id: busyConversation } });
        expect(busy.status).toBe(409);
        expect(busy.body).toEqual({ error: 'conversation_busy', message: expect.any(String) });
        controller.abort();
      } finally {
        await paused.stop();
      }
    });
  });

  describe('DAG', () => {
    it('"What is 2+2 and what is 3*3?" plans two independent tasks and a synthesis', async () => {
      const res = await stream(`${stack.url}/api/dag`, { token: key, body: { q: 'What is 2+2 and what is 3*3?' } });
      expect(res.status).toBe(200);
      const [plan] = ofType(res.events, 'plan');
      expect(plan!.data.nodes).toEqual([
        { id: 'q1', task: 'What is 2+2', depends_on: [] },
        { id: 'q2', task: 'what is 3*3', depends_on: [] },
        { id: 'synthesis', task: expect.any(String), depends_on: ['q1', 'q2'] },
      ]);
      const nodes = ofType(res.events, 'node');
      for (const id of ['q1', 'q2', 'synthesis']) {
        expect(nodes.filter((n) => n.data.node_id === id).map((n) => n.data.status)).toEqual(['started', 'succeeded']);
      }
      // Both independent tasks start before either finishes: they run in one wave.
      const firstSucceeded = nodes.findIndex((n) => n.data.status === 'succeeded');
      expect(nodes.slice(0, firstSucceeded).map((n) => n.data.node_id).sort()).toEqual(['q1', 'q2']);
      const answer = ofType(res.events, 'answer')[0]!.data.content;
      expect(answer).toContain('4');
      expect(answer).toContain('9');
      expect(res.events.at(-1)).toMatchObject({ type: 'done', data: { status: 'succeeded' } });
      const run = await stack.knex('runs').where({ id: res.headers.get('x-run-id') }).first();
      expect(run).toMatchObject({ mode: 'dag', status: 'succeeded', answer });
    });
  });

  it.runIf(mode === 'cluster')('spreads users over all three masters: the keys of a run live on the master of its user\'s tag', async () => {
    const cluster = stack.redis as Cluster;
    const masters = cluster.nodes('master');
    expect(masters).toHaveLength(3);
    const slots = await masters[0]!.cluster('SLOTS');
    const masterOf = async (key: string) => {
      const slot = (await masters[0]!.cluster('KEYSLOT', key)) as number;
      const [, , owner] = slots.find(([from, to]) => slot >= from && slot <= to)!;
      return masters.find((m) => m.options.port === owner![1])!;
    };
    // Users until each master holds one's tag (bounded: the chance that 60 miss a master is nil).
    const byMaster = new Map<unknown, { id: string; key: string }>();
    for (let i = 0; i < 60 && byMaster.size < 3; i++) {
      const { user, key: userKey } = await stack.user();
      const master = await masterOf(stack.identity.keys.userActiveRuns(user.id));
      if (!byMaster.has(master)) byMaster.set(master, { id: user.id, key: userKey });
    }
    expect(byMaster.size).toBe(3);
    for (const [master, user] of byMaster) {
      const res = await stream(`${stack.url}/api/react`, { token: user.key, body: { q: 'What is 6*7?' } });
      expect(ofType(res.events, 'answer')[0]!.data.content).toContain('42');
      const run = { id: res.headers.get('x-run-id')!, userId: user.id };
      const node = master as (typeof masters)[number];
      // A finished run leaves only its stream (DESIGN §13), on the master of its user's tag.
      expect(await node.exists(stack.identity.keys.runEvents(run))).toBe(1);
    }
  });
});

describe('DAG limits', () => {
  it('a question with 300 " and "s plans at most DAG_MAX_NODES (16) nodes, the rest merged, and finishes', async () => {
    const q = Array.from({ length: 301 }, (_, i) => `x${i}`).join(' and ');
    const res = await stream(`${stack.url}/api/dag`, { token: key, body: { q } });
    expect(res.status).toBe(200);
    const nodes = ofType(res.events, 'plan')[0]!.data.nodes as { id: string; task: string }[];
    expect(nodes).toHaveLength(16);
    expect(nodes[14]!.task).toContain('287 sub-tasks merged');
    expect(ofType(res.events, 'node').filter((n) => n.data.status === 'succeeded')).toHaveLength(16);
    expect(res.events.at(-1)).toMatchObject({ type: 'done', data: { status: 'succeeded' } });
  });
});

describe('credentials on streaming endpoints', () => {
  it('accepts the body token as an API key or a JWT', async () => {
    const { user } = await stack.user();
    const { key: bodyKey } = await stack.identity.apiKeys.create(user.id, { name: 'body' });
    const { token: jwt } = await stack.identity.jwt.sign(user.id, randomUUID());
    for (const token of [bodyKey, jwt]) {
      const res = await stream(`${stack.url}/api/react`, { body: { q: 'What is 1+1?', token } });
      expect(res.status).toBe(200);
      expect(ofType(res.events, 'answer')[0]!.data.content).toContain('2');
    }
  });

  it('no header and no body token → unauthorized; a kb-only key → forbidden', async () => {
    const none = await stream(`${stack.url}/api/react`, { body: { q: 'hi' } });
    expect(none.status).toBe(401);
    expect(none.body.error).toBe('unauthorized');
    const { user } = await stack.user();
    const { key: kbKey } = await stack.identity.apiKeys.create(user.id, { name: 'kb', scopes: 'kb' });
    const forbidden = await stream(`${stack.url}/api/dag`, { token: kbKey, body: { q: 'hi' } });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error).toBe('forbidden');
    const { key: chatKey } = await stack.identity.apiKeys.create(user.id, { name: 'chat', scopes: 'chat' });
    expect((await stream(`${stack.url}/api/react`, { token: chatKey, body: { q: 'hi' } })).status).toBe(200);
    expect((await post('/api/chat/inject', kbKey, { conversation_id: '00000000-0000-4000-8000-000000000000', content: 'x' })).status).toBe(403);
  });

  it('another user’s or an unknown conversation or agent → 404', async () => {
    const alice = await stack.user();
    const bob = await stack.user();
    const res = await stream(`${stack.url}/api/react`, { token: alice.key, body: { q: 'mine' } });
    const conversationId = res.headers.get('x-conversation-id')!;
    for (const body of [{ q: 'x', conversation_id: conversationId }, { q: 'x', conversation_id: '00000000-0000-4000-8000-000000000000' }, { q: 'x', agent_id: '00000000-0000-4000-8000-000000000000' }]) {
      const other = await stream(`${stack.url}/api/react`, { token: bob.key, body });
      expect(other.status).toBe(404);
      expect(other.body.error).toBe('not_found');
    }
    expect(await stack.knex('messages').where({ conversation_id: conversationId }).count('* as n').first()).toEqual({ n: '2' });
  });
});
