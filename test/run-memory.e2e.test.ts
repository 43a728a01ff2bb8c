import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.js';
import { stream } from './support/sse.js';
import { eventually } from './support/eventually.js';
import { RUN_QUEUE } from '../src/shared/jobs.js';

/** What a finished run leaves in Redis (DESIGN §13): only its event stream, for RUN_STREAM_TTL_S; its outcome stays in Postgres. */
let kept: Stack;
let brief: Stack;
beforeAll(async () => {
  [kept, brief] = await Promise.all([startStack({ env: { LOCAL_MODEL_TOKEN_DELAY_MS: '20' } }), startStack({ env: { RUN_STREAM_TTL_S: '1' } })]);
});
afterAll(() => Promise.all([kept?.stop(), brief?.stop()]));

const call = (stack: Stack, path: string, token: string, method = 'GET', body?: unknown) =>
  fetch(`${stack.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).then(async (res) => ({
    status: res.status,
    body: await res.json(),
  }));

async function keysOf(stack: Stack): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await stack.redis.scan(cursor, 'MATCH', `${stack.env.REDIS_KEY_PREFIX}*`, 'COUNT', 1000);
    found.push(...keys);
    cursor = next;
  } while (cursor !== '0');
  return found;
}

/** The keys that name any of the run's ids, once nothing but its stream is left (or the last ones seen, on timeout). */
async function leftBy(stack: Stack, ids: string[], streamKey: string): Promise<string[]> {
  let left: string[] = [];
  await eventually(async () => {
    left = (await keysOf(stack)).filter((key) => ids.some((id) => key.includes(id)));
    return left.length === 1 && left[0] === streamKey;
  }, 'the run to leave only its stream').catch(() => {});
  return left;
}

describe('a finished run in Redis', () => {
  it.each([
    ['succeeded', 'What is 6*7?', false],
    ['cancelled', 'Tell me a long story about nothing in particular', true],
  ])('%s: only its stream is left, expiring within RUN_STREAM_TTL_S; no job lingers', async (status, q, cancelAtFirstToken) => {
    const { user, key } = await kept.user();
    let runId = '';
    let cancelled: Promise<unknown> | undefined;
    const res = await stream(`${kept.url}/api/react`, {
      token: key,
      body: { q },
      onEvent: (e) => {
        if (e.type === 'run') runId = e.data.run_id;
        if (cancelAtFirstToken && e.type === 'token' && !cancelled) cancelled = call(kept, `/api/runs/${runId}/cancel`, key, 'POST');
      },
    });
    await cancelled;
    expect(res.events.at(-1)).toMatchObject({ type: 'done', data: { status } });
    await expectOnlyItsStream(runId, res.headers.get('x-conversation-id')!, user.id);
  });

  it('a run that waited for approval: its approvals are gone too', async () => {
    const { user, key } = await kept.user();
    const agent = await fetch(`${kept.url}/api/agents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'careful', tool_approval: ['calculator'] }),
    }).then((r) => r.json());
    let runId = '';
    let decided: Promise<{ status: number }> | undefined;
    const res = await stream(`${kept.url}/api/react`, {
      token: key,
      body: { q: 'What is 6*7?', agent_id: agent.id },
      onEvent: (e) => {
        if (e.type === 'run') runId = e.data.run_id;
        if (e.type === 'approval_required') decided = call(kept, `/api/runs/${runId}/approvals`, key, 'POST', { call_id: e.data.call_id, decision: 'approve' });
      },
    });
    expect((await decided)?.status).toBe(202);
    expect(res.events.at(-1)).toMatchObject({ type: 'done', data: { status: 'succeeded' } });
    await expectOnlyItsStream(runId, res.headers.get('x-conversation-id')!, user.id);
  });
});

/** Nothing names the run, its conversation or its user but the run's stream, which expires within the default hour; no finished job is kept. */
async function expectOnlyItsStream(runId: string, conversationId: string, userId: string) {
  const { keys } = kept.identity;
  const streamKey = keys.runEvents({ id: runId, userId });
  expect(await leftBy(kept, [runId, conversationId, userId], streamKey)).toEqual([streamKey]);
  const ttl = await kept.redis.ttl(streamKey);
  expect(ttl).toBeGreaterThan(3500);
  expect(ttl).toBeLessThanOrEqual(3600);
  expect(await kept.redis.exists(`${keys.bullPrefix(RUN_QUEUE)}:${RUN_QUEUE}:completed`)).toBe(0);
}

describe('a finished run whose stream expired', () => {
  it('events → 410 gone with its final status, answer and usage; GET /api/runs/{id} keeps them', async () => {
    const { user, key } = await brief.user();
    const live = await stream(`${brief.url}/api/react`, { token: key, body: { q: 'What is 6*7?' } });
    const runId = live.headers.get('x-run-id')!;
    const streamKey = brief.identity.keys.runEvents({ id: runId, userId: user.id });
    expect(await brief.redis.ttl(streamKey)).toBeLessThanOrEqual(1);
    await eventually(async () => (await brief.redis.exists(streamKey)) === 0, 'the stream to expire', { timeoutMs: 10_000 });
    const run = await call(brief, `/api/runs/${runId}`, key);
    expect(run.status).toBe(200);
    expect(run.body.answer).toContain('42');
    expect(run.body.usage).toMatchObject({ total_tokens: expect.any(Number) });
    const gone = await call(brief, `/api/runs/${runId}/events`, key);
    expect(gone.status).toBe(410);
    expect(gone.body).toEqual({
      error: 'gone',
      message: expect.stringContaining(`/api/runs/${runId}`),
      status: 'succeeded',
      answer: run.body.answer,
      usage: run.body.usage,
    });
  });
});

describe('RUN_STREAM_TTL_S', () => {
  it.each(['dist/src/server.js', 'dist/workers/main.js'])('a bad value stops %s at boot with one line naming it', async (script) => {
    const root = fileURLToPath(new URL('../', import.meta.url));
    const child = spawn(process.execPath, [script], { cwd: root, env: { ...process.env, ...kept.env, RUN_STREAM_TTL_S: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(1);
    expect(stderr.trim()).toMatch(/^Invalid configuration: RUN_STREAM_TTL_S .+$/);
  });
});
