import { randomUUID } from 'node:crypto';
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.js';
import { ofType, stream } from './support/sse.js';
import { RUN_QUEUE, RunJobSchema } from '../src/shared/jobs.js';
import { RunStore } from '../src/engine/run-store.js';
import { Superseded } from '../src/shared/errors.js';
import type { Usage } from '../src/shared/events.js';

/**
 * Issue 26: the writes that commit without waiting for the disk, and what makes them safe. A new
 * run's row commits asynchronously only when its job carries it, so a Postgres crash that loses the
 * row leaves the worker what to write again; a worker's claim commits asynchronously, so an attempt
 * whose claim was lost claims again at its next write (unless a newer attempt has the run).
 * A crash is stood in for by deleting or rewinding what it would have lost.
 */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ workers: 0 });
});
afterAll(() => stack.stop());

const usage: Usage = { prompt_tokens: 1, completion_tokens: 1, reasoning_tokens: 0, total_tokens: 2 };

describe('a run whose row Postgres lost', () => {
  it('is written again by the worker from its job, with the same question, and finishes', async () => {
    const { key, user } = await stack.user();
    const controller = new AbortController();
    const first = await stream(`${stack.url}/api/react`, { token: key, body: { q: 'What is 2*21?', user_metadata: 'kept' }, signal: controller.signal, onEvent: () => controller.abort() });
    const runId = first.headers.get('x-run-id')!;
    const conversationId = first.headers.get('x-conversation-id')!;
    const job = await jobOf(runId);
    expect(job.stored).toMatchObject({ query: 'What is 2*21?', userMetadata: 'kept', mode: 'react' });
    const question = await stack.knex('messages').where({ run_id: runId, role: 'user' }).first();
    expect(question.id).toBe(job.stored!.questionId);

    // Joined while the row is there (the web answers 404 for a run it cannot find), then the crash takes
    // what the one statement wrote: the conversation, the run and its question.
    let opened!: () => void;
    const open = new Promise<void>((resolve) => (opened = resolve));
    const joined = stream(`${stack.url}/api/runs/${runId}/events`, { method: 'GET', token: key, onEvent: () => opened() });
    await open;
    await stack.knex('messages').where({ conversation_id: conversationId }).delete();
    await stack.knex('runs').where({ id: runId }).delete();
    await stack.knex('conversations').where({ id: conversationId }).delete();

    const worker = await stack.startWorker();
    try {
      await worker.waitFor(/writing its row again/);
      const result = await joined;
      expect(ofType(result.events, 'answer')[0]!.data.content).toContain('42');
      expect(result.events.at(-1)).toMatchObject({ type: 'done', data: { status: 'succeeded' } });
      expect(await stack.knex('runs').where({ id: runId }).first()).toMatchObject({ status: 'succeeded', user_id: user.id, conversation_id: conversationId, query: 'What is 2*21?', user_metadata: 'kept', attempt: 1 });
      const messages = await stack.knex('messages').where({ conversation_id: conversationId }).orderBy('seq');
      expect(messages.map((m) => [m.id === question.id, m.role])).toEqual([
        [true, 'user'],
        [false, 'assistant'],
      ]);
    } finally {
      await worker.stop();
    }
  }, 60_000);

  it('only a plain run is carried (and committed asynchronously); one with a client history is not', async () => {
    const { key, user } = await stack.user();
    const res = await stack.api(key, 'POST', '/api/runs', { mode: 'react', q: 'plain' });
    expect(res.status).toBe(202);
    expect((await jobOf(res.body.run_id)).stored).toMatchObject({ query: 'plain', agentId: null, docMode: null });
    const chat = await fetch(`${stack.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'agent:default', stream: true, messages: [{ role: 'user', content: 'earlier' }, { role: 'assistant', content: 'yes' }, { role: 'user', content: 'now' }] }),
    });
    expect(chat.status).toBe(200);
    const run = await stack.knex('runs').where({ user_id: user.id, query: 'now' }).first();
    const job = await jobOf(run.id);
    await chat.body?.cancel();
    expect(job.runId).toBe(run.id);
    expect(job.stored).toBeUndefined();
  });
});

describe('an attempt whose claim Postgres lost', () => {
  async function claimedRun(store: RunStore) {
    const { user } = await stack.user();
    const run = await store.create({ runId: randomUUID(), userId: user.id, conversationId: randomUUID(), agentId: null, mode: 'react', query: 'q', userMetadata: null, docMode: null, attachments: [] });
    const loaded = await store.load(run.id, { messages: 10, tokens: 10_000, windows: 1 }, { attempt: 1, crashes: 0 });
    expect(loaded).toMatchObject({ claimed: true, run: { status: 'queued' } });
    expect(await stack.knex('runs').where({ id: run.id }).first()).toMatchObject({ status: 'running', attempt: 1 });
    return Object.assign(loaded!.run, { attempt: 1 });
  }

  it('claims again at its next write and finishes the run', async () => {
    const store = new RunStore(stack.knex, stack.identity.models);
    const run = await claimedRun(store);
    await stack.knex('runs').where({ id: run.id }).update({ status: 'queued', attempt: 0, started_at: null });
    await store.saveCheckpoint(run.id, 1, JSON.stringify({ v: 1 }));
    expect(await stack.knex('runs').where({ id: run.id }).first()).toMatchObject({ status: 'running', attempt: 1 });
    await stack.knex('runs').where({ id: run.id }).update({ status: 'queued', attempt: 0 });
    await store.succeed(run, { answer: 'a', citations: [], finishReason: 'stop', usage, durationMs: 1, model: 'local' });
    expect(await stack.knex('runs').where({ id: run.id }).first()).toMatchObject({ status: 'succeeded', attempt: 1, answer: 'a' });
  });

  it('is superseded, writing nothing, when a newer attempt has the run or it has ended', async () => {
    const store = new RunStore(stack.knex, stack.identity.models);
    const run = await claimedRun(store);
    await stack.knex('runs').where({ id: run.id }).update({ attempt: 2 });
    await expect(store.succeed(run, { answer: 'late', citations: [], finishReason: 'stop', usage, durationMs: 1, model: 'local' })).rejects.toBeInstanceOf(Superseded);
    await expect(store.saveCheckpoint(run.id, 1, '{}')).rejects.toBeInstanceOf(Superseded);
    expect(await stack.knex('runs').where({ id: run.id }).first()).toMatchObject({ status: 'running', attempt: 2, answer: null, checkpoint: null });

    const ended = await claimedRun(store);
    await stack.knex('runs').where({ id: ended.id }).update({ status: 'cancelled', attempt: 0 });
    await expect(store.fail(ended, { status: 'failed', error: null, usage, durationMs: 1, model: 'local' })).rejects.toBeInstanceOf(Superseded);
    expect(await stack.knex('runs').where({ id: ended.id }).first()).toMatchObject({ status: 'cancelled', attempt: 0 });
  });
});

/** The run job BullMQ holds for a run, as a worker would read it. */
async function jobOf(runId: string) {
  const data = await stack.redis.hget(`${stack.identity.keys.bullPrefix(RUN_QUEUE)}:${RUN_QUEUE}:${runId}`, 'data');
  return v.parse(RunJobSchema, JSON.parse(data!));
}
