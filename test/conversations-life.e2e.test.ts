import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.js';
import { stream, type ReceivedEvent } from './support/sse.js';
import { eventually } from './support/eventually.js';
import { createDatabase } from './support/database.js';
import { RETENTION_QUEUE, RETENTION_SCHEDULER } from '../workers/retention.js';

/**
 * The life of conversations (DESIGN §20) through built web and worker processes: deleting a
 * conversation whose run is really running (waiting for an approval) and after it ended, and the
 * workers' retention job (CONVERSATION_RETENTION_DAYS=1) on backdated conversations.
 */
let stack: Stack;
let database: Awaited<ReturnType<typeof createDatabase>>;

// A database of its own: the job deletes every idle conversation it finds, other test files' too.
beforeAll(async () => {
  database = await createDatabase();
  stack = await startStack({ env: { CONVERSATION_RETENTION_DAYS: '1', DATABASE_URL: database.url } });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await database?.drop();
});

const count = async (table: string, where: Record<string, unknown>) => Number((await stack.knex(table).where(where).count({ n: '*' }))[0]!.n);

describe('DELETE /api/conversations/{id} with real runs', () => {
  it('a run waiting for approval → 409, nothing deleted; once it ends → 204, messages and stream gone, the run kept without content', async () => {
    const { key, user } = await stack.user();
    const agent = await stack.api(key, 'POST', '/api/agents', { name: 'careful', tool_approval: ['calculator'] });
    expect(agent.status).toBe(201);
    let runId = '';
    let conversationId = '';
    let decided: Promise<unknown> | undefined;
    let refusedWhileRunning: { status: number; body: any } | undefined;
    const result = await stream(`${stack.url}/api/react`, {
      token: key,
      body: { q: 'What is 6*7?', agent_id: agent.body.id },
      onEvent: (event: ReceivedEvent) => {
        if (event.type === 'run') {
          runId = event.data.run_id;
          conversationId = event.data.conversation_id;
        }
        if (event.type === 'status' && event.data.status === 'waiting' && !decided) {
          decided = (async () => {
            refusedWhileRunning = await stack.api(key, 'DELETE', `/api/conversations/${conversationId}`);
            expect(await count('messages', { conversation_id: conversationId })).toBe(1);
            await stack.api(key, 'POST', `/api/runs/${runId}/approvals`, { call_id: 'call_1', decision: 'approve' });
          })();
        }
      },
    });
    await decided;
    expect(refusedWhileRunning).toMatchObject({ status: 409, body: { error: 'conversation_busy' } });
    expect(result.events.at(-1)).toMatchObject({ type: 'done', data: { status: 'succeeded' } });

    const streamKey = stack.identity.keys.runEvents({ id: runId, userId: user.id });
    expect(await stack.redis.exists(streamKey)).toBe(1);
    expect(await count('messages', { conversation_id: conversationId })).toBe(2);
    const before = (await stack.api(key, 'GET', `/api/runs/${runId}`)).body;
    expect(before.answer).toContain('42');

    // The stream has its `done`; the run lets go of the conversation in Redis and Postgres a moment later.
    await eventually(async () => (await stack.api(key, 'DELETE', `/api/conversations/${conversationId}`)).status === 204, 'the DELETE to be taken');
    expect(await count('messages', { conversation_id: conversationId })).toBe(0);
    expect(await stack.redis.exists(streamKey)).toBe(0);
    expect((await stack.api(key, 'GET', `/api/conversations/${conversationId}`)).status).toBe(404);
    const after = await stack.api(key, 'GET', `/api/runs/${runId}`);
    expect(after.status).toBe(200);
    expect(after.body).toMatchObject({ status: 'succeeded', query: null, answer: null, usage: before.usage, created_at: before.created_at, finished_at: before.finished_at });
    // Its stream is gone for good: a re-join learns the outcome only.
    const events = await fetch(`${stack.url}/api/runs/${runId}/events`, { headers: { authorization: `Bearer ${key}` } });
    expect(events.status).toBe(410);
    await events.body?.cancel();
  });
});

describe('retention (CONVERSATION_RETENTION_DAYS=1)', () => {
  it('registers one job scheduler; a job deletes idle conversations in batches with conversation.expire entries, keeping an active one', async () => {
    const { key, user } = await stack.user();
    const queue = new Queue(RETENTION_QUEUE, { connection: stack.redis, prefix: stack.identity.keys.bullPrefix(RETENTION_QUEUE) });
    try {
      const schedulers = await queue.getJobSchedulers();
      expect(schedulers.map((s) => s.key)).toEqual([RETENTION_SCHEDULER]);

      // 1,200 idle conversations (3 batches of 500) with a message each, one recent one, one idle with a run waiting for approval.
      const idle = Array.from({ length: 1200 }, () => randomUUID());
      await stack.knex.raw(
        `insert into conversations (id, user_id, title, updated_at) select id::uuid, ?, 'old', now() - interval '3 days' from unnest(?::text[]) id`,
        [user.id, `{${idle.join(',')}}`],
      );
      await stack.knex.raw(`insert into messages (id, conversation_id, role, content) select gen_random_uuid(), id::uuid, 'user', 'old' from unnest(?::text[]) id`, [`{${idle.join(',')}}`]);
      const recent = (await stack.api(key, 'POST', '/api/runs', { mode: 'react', q: 'hello' })).body.conversation_id as string;
      const agent = await stack.api(key, 'POST', '/api/agents', { name: 'careful', tool_approval: ['calculator'] });
      const waiting = await stack.api(key, 'POST', '/api/runs', { mode: 'react', q: 'What is 6*7?', agent_id: agent.body.id });
      expect(waiting.status).toBe(202);
      const active = waiting.body.conversation_id as string;
      await eventually(async () => (await stack.knex('runs').where({ id: waiting.body.run_id }).first('status'))?.status === 'waiting', 'the run to wait for approval');
      await eventually(async () => (await stack.knex('runs').where({ conversation_id: recent, status: 'succeeded' }).first('id')) !== undefined, 'the recent run to end');
      await stack.knex('conversations').where({ id: active }).update({ updated_at: stack.knex.raw(`now() - interval '3 days'`) });

      const job = await queue.add('expire', {});
      const finished = await eventually(async () => {
        const state = await queue.getJobState(job.id!);
        return state === 'completed' || state === 'failed' ? state : undefined;
      }, 'the retention job to finish', { timeoutMs: 60_000 });
      expect(finished).toBe('completed');
      const done = await queue.getJob(job.id!);
      expect(done?.returnvalue).toMatchObject({ deleted: 1200, batches: 3 });

      expect(await count('conversations', { user_id: user.id })).toBe(2);
      expect((await stack.knex('conversations').where({ user_id: user.id }).pluck('id')).sort()).toEqual([recent, active].sort());
      expect(Number((await stack.knex('messages').whereIn('conversation_id', idle).count({ n: '*' }))[0]!.n)).toBe(0);
      const audited = await stack.knex('audit_log').where({ action: 'conversation.expire', target_type: 'conversation' }).whereIn('target_id', idle).count({ n: '*' });
      expect(audited).toEqual([{ n: '1200' }]);

      // The waiting run ends; its conversation goes at the next run of the job.
      await stack.api(key, 'POST', `/api/runs/${waiting.body.run_id}/approvals`, { call_id: 'call_1', decision: 'reject' });
      await eventually(async () => (await stack.knex('runs').where({ id: waiting.body.run_id }).first('status'))?.status !== 'waiting', 'the run to end');
      await eventually(async () => ['succeeded', 'failed'].includes((await stack.knex('runs').where({ id: waiting.body.run_id }).first('status'))?.status), 'the run to be final');
      await stack.knex('conversations').where({ id: active }).update({ updated_at: stack.knex.raw(`now() - interval '3 days'`) });
      // Once the run has let go of it in Redis too, a job takes it.
      await eventually(async () => {
        const again = await queue.add('expire', {});
        await eventually(async () => (await queue.getJobState(again.id!)) === 'completed', 'the job to complete');
        return (await count('conversations', { id: active })) === 0;
      }, 'a later job to delete the conversation whose run ended');
      expect(await count('conversations', { id: recent })).toBe(1);
    } finally {
      await queue.close();
    }
  }, 120_000);
});
