import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Proc, type Stack } from './support/stack.js';
import { ofType, stream, type ReceivedEvent, type StreamResult } from './support/sse.js';
import { eventually } from './support/eventually.js';
import { WebhookReceiver } from './support/webhook-receiver.js';
import { SINGLE_REDIS, redisEnv, type RedisMode } from './support/redis-modes.js';

/**
 * Tool approval (DESIGN §11) through built web and worker processes: a run waits for a person's
 * decision holding no worker, resumes from its checkpoint with no repeated event or tool call.
 */
const stacks = {} as Record<RedisMode, Stack>;
let stack: Stack;
let quick: Stack;
let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  const main = (mode: RedisMode) => startStack({ workers: 2, env: { LOCAL_MODEL_TOKEN_DELAY_MS: '0', JOB_LOCK_MS: '5000', JOB_STALLED_INTERVAL_MS: '1000', ...redisEnv(mode) } });
  [stacks.single, stacks.cluster, quick] = await Promise.all([
    main('single'),
    main('cluster'),
    // Approvals time out after 2 s here.
    startStack({ env: { LOCAL_MODEL_TOKEN_DELAY_MS: '0', APPROVAL_TIMEOUT_S: '2' } }),
  ]);
});
afterAll(async () => {
  await Promise.all([...Object.values(stacks).map((s) => s.stop()), quick.stop()]);
  await receiver.close();
});

/** The describe's tests act on the stack of that Redis mode. */
const on = (mode: RedisMode) =>
  beforeAll(() => {
    stack = stacks[mode];
  });

const api = (on: Stack, key: string, method: string, path: string, body?: unknown) =>
  fetch(`${on.url}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }).then(async (res) => ({
    status: res.status,
    body: (await res.json().catch(() => undefined)) as any,
  }));

/** A user and an agent whose calculator calls wait for approval. */
async function gatedAgent(on = stack, toolApproval: unknown = ['calculator']) {
  const { key, user } = await on.user();
  const agent = await api(on, key, 'POST', '/api/agents', { name: 'careful', tool_approval: toolApproval });
  expect(agent.status).toBe(201);
  return { key, user, agentId: agent.body.id as string };
}

/** Starts a run and hands each event to `onEvent`; resolves with the whole stream once it ends. */
async function startRun(on: Stack, key: string, body: Record<string, unknown>, onEvent: (event: ReceivedEvent) => void, mode = 'react'): Promise<StreamResult> {
  const res = await stream(`${on.url}/api/${mode}`, { token: key, body, onEvent });
  // A refused start says why, instead of failing later on an empty list of events.
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res;
}

/** Every event once: ids are unique, and no call is made or resulted twice. */
function expectNoRepeats(events: ReceivedEvent[]) {
  expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
  const calls = ofType(events, 'tool_call').map((e) => `${e.data.iteration}/${e.data.call_id}`);
  expect(new Set(calls).size).toBe(calls.length);
}

/** Runs `decide` once the run is parked (its row waiting), with the pending approval events seen so far. */
function whenWaiting(on: Stack, decide: (runId: string, pending: ReceivedEvent[]) => Promise<void>) {
  const seen: ReceivedEvent[] = [];
  let runId = '';
  let decided: Promise<void> | undefined;
  const onEvent = (event: ReceivedEvent) => {
    seen.push(event);
    if (event.type === 'run') runId = event.data.run_id;
    if (event.type === 'status' && event.data.status === 'waiting' && !decided) decided = decide(runId, ofType(seen, 'approval_required'));
  };
  return { onEvent, decided: () => decided, runId: () => runId, on };
}

describe.each(SINGLE_REDIS)('on a %s Redis', (mode) => {
  on(mode);

  describe('a tool call waiting for approval', () => {
    it('approve: the run waits (no worker, row waiting), then resumes and the tool runs once', async () => {
      const { key, agentId } = await gatedAgent();
      let rowWhileWaiting: { status: string } | undefined;
      const flow = whenWaiting(stack, async (runId, pending) => {
        // The row turns `waiting` right after the event that says so.
        rowWhileWaiting = await eventually(async () => {
          const row = await stack.knex('runs').where({ id: runId }).first();
          return row.status === 'waiting' && row;
        }, 'the row to say waiting');
        expect(pending.map((e) => e.data)).toEqual([{ iteration: 1, call_id: 'call_1', name: 'calculator', arguments: { expression: '6*7' } }]);
        const decision = await api(stack, key, 'POST', `/api/runs/${runId}/approvals`, { call_id: 'call_1', decision: 'approve' });
        expect(decision.status).toBe(202);
        expect(decision.body).toMatchObject({ run_id: runId, call_id: 'call_1', decision: 'approve' });
      });
      const res = await startRun(stack, key, { q: 'What is 6*7?', agent_id: agentId }, flow.onEvent);
      await flow.decided();
      expect(rowWhileWaiting).toMatchObject({ status: 'waiting' });
      const types = res.events.map((e) => (e.type === 'status' ? `status:${e.data.status}` : e.type));
      expect(types.slice(0, 6)).toEqual(['run', 'status:running', 'thought', 'approval_required', 'status:waiting', 'status:resumed']);
      expect(types.slice(6, 8)).toEqual(['tool_call', 'tool_result']);
      expect(ofType(res.events, 'tool_result')[0]!.data).toMatchObject({ output: 42, is_error: false });
      expect(ofType(res.events, 'answer')[0]!.data.content).toContain('42');
      expect(res.events.at(-1)).toMatchObject({ type: 'done', data: { status: 'succeeded' } });
      expectNoRepeats(res.events);
      // A decision made already, or for a call never asked about, is refused.
      expect((await api(stack, key, 'POST', `/api/runs/${flow.runId()}/approvals`, { call_id: 'call_1', decision: 'reject' })).status).toBe(409);
    });

    it('reject: the model reads an error result with the message, and answers', async () => {
      const { key, agentId } = await gatedAgent(stack, 'always');
      const flow = whenWaiting(stack, async (runId) => {
        expect((await api(stack, key, 'POST', `/api/runs/${runId}/approvals`, { call_id: 'call_9', decision: 'approve' })).status).toBe(409);
        expect((await api(stack, key, 'POST', `/api/runs/${runId}/approvals`, { call_id: 'call_1', decision: 'reject', message: 'not today' })).status).toBe(202);
      });
      const res = await startRun(stack, key, { q: 'What is 2+2?', agent_id: agentId }, flow.onEvent);
      expect(ofType(res.events, 'tool_result')[0]!.data).toMatchObject({ output: 'rejected: not today', is_error: true });
      expect(ofType(res.events, 'answer')[0]!.data.content).toContain('rejected: not today');
      expect(res.events.at(-1)).toMatchObject({ type: 'done', data: { status: 'succeeded' } });
      expectNoRepeats(res.events);
    });

    it('several calls at once (a DAG wave): the run resumes only when every one is decided', async () => {
      const { key, agentId } = await gatedAgent();
      const flow = whenWaiting(stack, async (runId, pending) => {
        const ids = pending.map((e) => (e.data as { call_id: string }).call_id).sort();
        expect(ids).toEqual(['q1/call_1', 'q2/call_1']);
        const first = await api(stack, key, 'POST', `/api/runs/${runId}/approvals`, { call_id: ids[0], decision: 'approve' });
        expect(first.body.status).toBe('recorded');
        await eventually(async () => (await stack.knex('runs').where({ id: runId }).first()).status === 'waiting', 'the row to say waiting');
        const last = await api(stack, key, 'POST', `/api/runs/${runId}/approvals`, { call_id: ids[1], decision: 'approve' });
        expect(last.body.status).toBe('resuming');
      });
      const res = await startRun(stack, key, { q: 'What is 2+3 and what is 4*5?', agent_id: agentId }, flow.onEvent, 'dag');
      const answer = ofType(res.events, 'answer')[0]!.data.content;
      expect(answer).toContain('5');
      expect(answer).toContain('20');
      expect(res.events.at(-1)).toMatchObject({ type: 'done', data: { status: 'succeeded' } });
      // Both nodes' calls are call_1 (ids repeat across nodes): each node's call and result once, none lost on resume.
      expect(new Set(res.events.map((e) => e.id)).size).toBe(res.events.length);
      expect(ofType(res.events, 'tool_call').map((e) => e.data.arguments.expression).sort()).toEqual(['2+3', '4*5']);
      expect(ofType(res.events, 'tool_result')).toHaveLength(2);
    });

    it('injects while waiting are accepted and absorbed when it resumes; it leaves the per-user cap meanwhile', async () => {
      const { key, agentId } = await gatedAgent();
      const flow = whenWaiting(stack, async (runId) => {
        const { conversation_id: conversationId, user_id: userId } = await stack.knex('runs').where({ id: runId }).first();
        // A parked run does not count toward RUNS_PER_USER_LIMIT (it leaves the cap once its job is delayed).
        const capped = stack.identity.keys.userActiveRuns(userId);
        await eventually(async () => (await stack.redis.zscore(capped, runId)) === null, 'the run to leave the cap');
        expect((await api(stack, key, 'POST', '/api/chat/inject', { conversation_id: conversationId, content: 'and say thanks' })).status).toBe(200);
        expect((await api(stack, key, 'POST', `/api/runs/${runId}/approvals`, { call_id: 'call_1', decision: 'approve' })).status).toBe(202);
      });
      const res = await startRun(stack, key, { q: 'What is 3*3?', agent_id: agentId }, flow.onEvent);
      expect(ofType(res.events, 'injected').map((e) => e.data.content)).toEqual(['and say thanks']);
      const answer = ofType(res.events, 'answer')[0]!.data.content;
      expect(answer).toContain('9');
      expect(answer).toContain('"and say thanks"');
      expectNoRepeats(res.events);
    });

    it('cancel while waiting ends it at once: done cancelled, conversation freed', async () => {
      const { key, agentId } = await gatedAgent();
      const flow = whenWaiting(stack, async (runId) => {
        expect((await api(stack, key, 'POST', `/api/runs/${runId}/cancel`)).status).toBe(202);
      });
      const res = await startRun(stack, key, { q: 'What is 8*8?', agent_id: agentId }, flow.onEvent);
      expect(res.events.at(-1)).toMatchObject({ type: 'done', data: { status: 'cancelled' } });
      expect(ofType(res.events, 'tool_call')).toHaveLength(0);
      expect((await stack.knex('runs').where({ id: flow.runId() }).first()).status).toBe('cancelled');
      expect((await api(stack, key, 'POST', `/api/runs/${flow.runId()}/approvals`, { call_id: 'call_1', decision: 'approve' })).status).toBe(409);
      const again = await stream(`${stack.url}/api/react`, { token: key, body: { q: 'hi', conversation_id: res.headers.get('x-conversation-id') } });
      expect(again.status).toBe(200);
    });
  });
});

describe('a tool call waiting for approval', () => {
  on('single');

  it('a decision that never comes: APPROVAL_TIMEOUT_S ends the run with approval_timeout', async () => {
    const { key, agentId } = await gatedAgent(quick);
    const res = await startRun(quick, key, { q: 'What is 1+1?', agent_id: agentId }, () => {});
    expect(ofType(res.events, 'error')[0]!.data).toMatchObject({ code: 'approval_timeout' });
    expect(res.events.at(-1)).toMatchObject({ type: 'done', data: { status: 'failed' } });
    expect(ofType(res.events, 'tool_call')).toHaveLength(0);
  });

  it('another user’s approval → 404; malformed decisions → 422', async () => {
    const { key, agentId } = await gatedAgent();
    const other = await stack.user();
    const flow = whenWaiting(stack, async (runId) => {
      expect((await api(stack, other.key, 'POST', `/api/runs/${runId}/approvals`, { call_id: 'call_1', decision: 'approve' })).status).toBe(404);
      for (const body of [{}, { call_id: 'call_1' }, { call_id: 'call_1', decision: 'maybe' }, { call_id: '', decision: 'approve' }, { call_id: 'call_1', decision: 'approve', extra: 1 }, { call_id: 7, decision: 'approve' }, { call_id: 'call_1', decision: 'reject', message: 'x'.repeat(3000) }]) {
        expect((await api(stack, key, 'POST', `/api/runs/${runId}/approvals`, body)).status).toBe(422);
      }
      expect((await api(stack, key, 'POST', `/api/runs/${runId}/approvals`, { call_id: 'call_1', decision: 'approve' })).status).toBe(202);
    });
    const res = await startRun(stack, key, { q: 'What is 5*5?', agent_id: agentId }, flow.onEvent);
    expect(ofType(res.events, 'answer')[0]!.data.content).toContain('25');
  });

  it('sends run.waiting to webhooks', async () => {
    const { key, user, agentId } = await gatedAgent();
    const path = `/waiting/${user.id}`;
    expect((await api(stack, key, 'POST', '/api/webhooks', { url: `${receiver.url}${path}`, events: ['run.waiting', 'run.succeeded'] })).status).toBe(201);
    const flow = whenWaiting(stack, async (runId) => {
      const [waiting] = await receiver.waitFor(path, 1);
      expect(JSON.parse(waiting!.body)).toMatchObject({ type: 'run.waiting', data: { run_id: runId, status: 'waiting' } });
      await api(stack, key, 'POST', `/api/runs/${runId}/approvals`, { call_id: 'call_1', decision: 'approve' });
    });
    await startRun(stack, key, { q: 'What is 7*6?', agent_id: agentId }, flow.onEvent);
    const [, done] = await receiver.waitFor(path, 2);
    expect(JSON.parse(done!.body).type).toBe('run.succeeded');
  });
});

describe('workers dying around a decision', () => {
  on('single');
  /** How many times the run's tool ran, by the workers' logs. */
  const toolRuns = (runId: string) => stack.workers.flatMap((w) => w.output.join('').split('\n')).filter((line) => line.includes(runId) && line.includes('"msg":"tool executed"')).length;

  it('kill -9 and SIGTERM of the workers while it waits lose nothing: a new worker resumes it after the decision', async () => {
    const { key, agentId } = await gatedAgent();
    const flow = whenWaiting(stack, async (runId) => {
      const [first, second] = stack.workers.splice(0, 2) as [Proc, Proc];
      await first.stop('SIGKILL');
      // A worker holding no run leaves at once on SIGTERM.
      expect(await second.stop('SIGTERM')).toBe(0);
      await stack.startWorker();
      expect((await api(stack, key, 'POST', `/api/runs/${runId}/approvals`, { call_id: 'call_1', decision: 'approve' })).status).toBe(202);
    });
    const res = await startRun(stack, key, { q: 'What is 9*9?', agent_id: agentId }, flow.onEvent);
    expect(ofType(res.events, 'answer')[0]!.data.content).toContain('81');
    expectNoRepeats(res.events);
    expect(toolRuns(flow.runId())).toBe(1);
  });

  it('the workers die right as the approval lands: the decision holds and the tool runs once', async () => {
    const { key, agentId } = await gatedAgent();
    const flow = whenWaiting(stack, async (runId) => {
      // Frozen, no worker can take the run the approval wakes; then they die, and a new one comes up.
      const frozen = stack.workers.splice(0);
      for (const worker of frozen) worker.child.kill('SIGSTOP');
      expect((await api(stack, key, 'POST', `/api/runs/${runId}/approvals`, { call_id: 'call_1', decision: 'approve' })).body.status).toBe('resuming');
      await Promise.all(frozen.map((worker) => worker.stop('SIGKILL')));
      await stack.startWorker();
    });
    const res = await startRun(stack, key, { q: 'What is 11*11?', agent_id: agentId }, flow.onEvent);
    expect(ofType(res.events, 'answer')[0]!.data.content).toContain('121');
    expectNoRepeats(res.events);
    // The new worker's log line may reach its pipe after the stream's end: wait for it, then count.
    await eventually(async () => toolRuns(flow.runId()) > 0, 'the tool call to be logged', { timeoutMs: 10_000 });
    expect(toolRuns(flow.runId())).toBe(1);
  });
});
