import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.js';
import { ofType, stream, type ReceivedEvent } from './support/sse.js';
import { politely } from './support/retry.js';
import { Queue } from 'bullmq';
import { RUN_QUEUE } from '../src/shared/jobs.js';
import { SINGLE_REDIS, redisEnv, type RedisMode } from './support/redis-modes.js';

/**
 * Inject per spec and DESIGN §5, against built processes on a single Redis and on a three-node
 * cluster. A slow local model keeps runs open.
 */
const stacks = {} as Record<RedisMode, { stack: Stack; key: string }>;
let stack: Stack;
let key: string;
beforeAll(async () => {
  await Promise.all(
    SINGLE_REDIS.map(async (mode) => {
      const started = await startStack({ env: { LOCAL_MODEL_TOKEN_DELAY_MS: '20', ...redisEnv(mode) } });
      stacks[mode] = { stack: started, key: (await started.user()).key };
    }),
  );
});
afterAll(() => Promise.all(Object.values(stacks).map(({ stack }) => stack.stop())));

const inject = (token: string, conversation_id: string, content: string) =>
  fetch(`${stack.url}/api/chat/inject`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ conversation_id, content }),
  }).then(async (res) => ({ status: res.status, body: await res.json() }));

const injectedIn = (conversationId: string) => stack.knex('messages').where({ conversation_id: conversationId, injected: true }).orderBy('seq');

describe.each(SINGLE_REDIS)('inject on a %s Redis', (mode) => {
  beforeAll(() => {
    ({ stack, key } = stacks[mode]);
  });

  it('while running → 200 {}, in the history at once, absorbed as an injected event and quoted in the answer', async () => {
    let injected: Promise<{ reply: { status: number; body: unknown }; stored: { content: string }[] }> | undefined;
    const res = await stream(`${stack.url}/api/react`, {
      token: key,
      body: { q: 'What is 6*7?' },
      onEvent: (event: ReceivedEvent) => {
        if (event.type === 'run') {
          const conversationId = event.data.conversation_id;
          injected = inject(key, conversationId, 'please also say hello').then(async (reply) => ({ reply, stored: await injectedIn(conversationId) }));
        }
      },
    });
    const { reply, stored } = await injected!;
    expect(reply).toEqual({ status: 200, body: {} });
    expect(stored.map((m) => m.content)).toEqual(['please also say hello']);
    const [absorbed] = ofType(res.events, 'injected');
    expect(absorbed!.data).toMatchObject({ content: 'please also say hello' });
    const answer = ofType(res.events, 'answer')[0]!.data.content;
    expect(answer).toContain('42');
    expect(answer).toContain('"please also say hello"');

    const conversationId = res.headers.get('x-conversation-id')!;
    const detail = await fetch(`${stack.url}/api/conversations/${conversationId}`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.json());
    expect(detail.messages.map((m: { role: string; injected: boolean }) => [m.role, m.injected])).toEqual([
      ['user', false],
      ['user', true],
      ['assistant', false],
    ]);
    expect(detail.messages[1].id).toBe(absorbed!.data.message_id);
    expect(detail.messages[1].run_id).toBe(res.headers.get('x-run-id'));
  });

  it('after done → 409 no_active_execution, nothing stored; unknown or another user’s conversation → 404', async () => {
    const res = await stream(`${stack.url}/api/react`, { token: key, body: { q: 'hi' } });
    const conversationId = res.headers.get('x-conversation-id')!;
    const late = await inject(key, conversationId, 'too late');
    expect(late).toEqual({ status: 409, body: { error: 'no_active_execution', message: expect.any(String) } });
    expect(await injectedIn(conversationId)).toEqual([]);

    const unknown = await inject(key, '00000000-0000-4000-8000-000000000000', 'x');
    expect(unknown.status).toBe(404);
    const other = await stack.user();
    const foreign = await inject(other.key, conversationId, 'not yours');
    expect(foreign.status).toBe(404);
    expect(await injectedIn(conversationId)).toEqual([]);
  });

  it('injects fired around the moment runs finish: every 200 is absorbed, no 409 is stored', async () => {
    const fast = await startStack({ env: { LOCAL_MODEL_TOKEN_DELAY_MS: '10', ...redisEnv(mode) } });
    try {
      const { key: fastKey } = await fast.user();
      const fire = (conversationId: string, content: string) =>
        politely(() =>
          fetch(`${fast.url}/api/chat/inject`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${fastKey}` },
            body: JSON.stringify({ conversation_id: conversationId, content }),
          }).then(async (r) => ({ content, status: r.status, headers: r.headers, body: await r.text() })),
        );
      // The queue is paused until every run's first inject is answered: those land while the run is
      // certainly active (queued), whatever the machine's load; the ones at `done` land after its end.
      const queue = new Queue(RUN_QUEUE, { connection: fast.redis, prefix: fast.identity.keys.bullPrefix(RUN_QUEUE) });
      await queue.pause();
      const RUNS = 20;
      const early: Promise<unknown>[] = [];
      let allQueued!: () => void;
      const queued = new Promise<void>((resolve) => (allQueued = resolve));
      const streams = Promise.all(
        Array.from({ length: RUNS }, async (_, run) => {
          const replies: Promise<{ content: string; status: number; body: string }>[] = [];
          let conversation = '';
          let firstAnswer: number | undefined;
          const res = await politely(() => stream(`${fast.url}/api/react`, {
            token: fastKey,
            body: { q: `What is ${run}+1?` },
            onEvent: (event) => {
              if (event.type === 'run') {
                conversation = event.data.conversation_id;
                const first = fire(conversation, `${run}:queued`);
                replies.push(first);
                early.push(first);
                if (early.length === RUNS) allQueued();
              }
              // Then injects as it starts, one per token of the first answer, and two at `done`: a burst across the finish.
              if (event.type === 'token') firstAnswer ??= event.data.iteration;
              const burst = event.type === 'status' || (event.type === 'token' && event.data.iteration === firstAnswer) || event.type === 'answer';
              if (burst) replies.push(fire(conversation, `${run}:${event.id}`));
              if (event.type === 'done') replies.push(fire(conversation, `${run}:done:1`), fire(conversation, `${run}:done:2`));
            },
          }));
          expect({ status: res.status, body: res.body }).toMatchObject({ status: 200 });
          return { res, replies, conversationId: res.headers.get('x-conversation-id')! };
        }),
      );
      await queued;
      await Promise.all(early);
      await queue.resume();
      await queue.close();
      const runs = await Promise.all((await streams).map(async (r) => ({ ...r, replies: await Promise.all(r.replies) })));
      let accepted = 0;
      let refused = 0;
      for (const { res, replies, conversationId } of runs) {
        const ok = replies.filter((r) => r.status === 200).map((r) => r.content).sort();
        expect(replies.filter((r) => r.status !== 200 && r.status !== 409)).toEqual([]);
        accepted += ok.length;
        refused += replies.length - ok.length;
        expect(ofType(res.events, 'injected').map((e) => e.data.content).sort()).toEqual(ok);
        const stored = await fast.knex('messages').where({ conversation_id: conversationId, injected: true });
        expect(stored.map((m) => m.content).sort()).toEqual(ok);
        expect(res.events.at(-1)!.type).toBe('done');
      }
      // The burst straddles the finish: every run's queued inject landed before it, those at `done` after it.
      expect(accepted).toBeGreaterThanOrEqual(RUNS);
      expect(refused).toBeGreaterThanOrEqual(2 * RUNS);
    } finally {
      await fast.stop();
    }
  });
});
