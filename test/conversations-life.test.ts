import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { createDatabase } from './support/database.js';
import { ConversationEraser, DEFAULT_ERASE } from '../src/conversations/erase.js';
import { leaseOptions } from '../src/engine/protocol-types.js';
import { runProtocol } from '../src/engine/run-protocol.js';

/**
 * The life of conversations (DESIGN §20) in one process, no worker: PATCH, paging, filters,
 * DELETE (a queued run holds the conversation like a running one), retention's deletion, and
 * deleting a user's data. Runs that really run are in conversations-life.e2e.test.ts.
 */
let app: TestApp;
let database: Awaited<ReturnType<typeof createDatabase>>;
let owner: Awaited<ReturnType<TestApp['signedInUser']>>;
let other: Awaited<ReturnType<TestApp['signedInUser']>>;

// A database of its own: retention deletes every idle conversation it finds, other test files' too.
beforeAll(async () => {
  database = await createDatabase();
  app = await startTestApp({ env: { DATABASE_URL: database.url } });
  owner = await app.signedInUser();
  other = await app.signedInUser();
});
afterAll(async () => {
  await app?.close();
  await database?.drop();
});

const call = (method: string, path: string, body?: unknown, token = owner.token) => app.request(method, path, { token, body });

/** A conversation of `userId` with `messages` messages ('message 1' oldest … 'message N'), straight into Postgres. */
async function seedConversation(userId: string, options: { messages?: number; agentId?: string | null; metadata?: Record<string, string> } = {}) {
  const { knex } = app.services;
  const id = randomUUID();
  await knex('conversations').insert({ id, user_id: userId, agent_id: options.agentId ?? null, title: 'seeded', metadata: JSON.stringify(options.metadata ?? {}) });
  if (options.messages) {
    await knex.raw(
      `insert into messages (id, conversation_id, role, content)
       select gen_random_uuid(), ?, case when g % 2 = 1 then 'user' else 'assistant' end, 'message ' || g from generate_series(1, ?) g order by g`,
      [id, options.messages],
    );
  }
  return id;
}

const messageCount = async (conversationId: string) => Number((await app.services.knex('messages').where({ conversation_id: conversationId }).count({ n: '*' }))[0]!.n);
const issueAt = (body: any, loc: (string | number)[]) => (body.detail as { loc: unknown[] }[]).find((issue) => JSON.stringify(issue.loc) === JSON.stringify(loc));

describe('PATCH /api/conversations/{id}', () => {
  it('renames, sets metadata (replacing it), clears it with null; another user’s → 404', async () => {
    const id = await seedConversation(owner.user.id);
    const renamed = await call('PATCH', `/api/conversations/${id}`, { title: 'Q3 planning' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id, title: 'Q3 planning', metadata: {} });

    const tagged = await call('PATCH', `/api/conversations/${id}`, { metadata: { project: 'atlas', customer: 'acme' } });
    expect(tagged.body.metadata).toEqual({ project: 'atlas', customer: 'acme' });
    expect(tagged.body.title).toBe('Q3 planning');
    const replaced = await call('PATCH', `/api/conversations/${id}`, { metadata: { project: 'zeus' } });
    expect(replaced.body.metadata).toEqual({ project: 'zeus' });
    expect((await call('GET', `/api/conversations/${id}`)).body).toMatchObject({ title: 'Q3 planning', metadata: { project: 'zeus' } });

    const cleared = await call('PATCH', `/api/conversations/${id}`, { metadata: null });
    expect(cleared.body.metadata).toEqual({});
    expect((await call('PATCH', `/api/conversations/${id}`, { title: 'mine' }, other.token)).status).toBe(404);
    expect((await call('PATCH', `/api/conversations/${randomUUID()}`, { title: 'none' })).status).toBe(404);
  });

  it('refuses 17 pairs, a value that is not a string, a key too long, an empty body — naming each', async () => {
    const id = await seedConversation(owner.user.id);
    const seventeen = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']));
    const tooMany = await call('PATCH', `/api/conversations/${id}`, { metadata: seventeen });
    expect(tooMany.status).toBe(422);
    expect(issueAt(tooMany.body, ['body', 'metadata'])).toMatchObject({ type: 'value_error', msg: expect.stringContaining('16') });
    const sixteen = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, 'v'.repeat(512)]));
    expect((await call('PATCH', `/api/conversations/${id}`, { metadata: sixteen })).status).toBe(200);

    const notString = await call('PATCH', `/api/conversations/${id}`, { metadata: { ok: 'yes', n: 5 } });
    expect(notString.status).toBe(422);
    expect(issueAt(notString.body, ['body', 'metadata', 'n'])).toMatchObject({ type: 'string_type' });
    const nested = await call('PATCH', `/api/conversations/${id}`, { metadata: { deep: { a: 'b' } } });
    expect(issueAt(nested.body, ['body', 'metadata', 'deep'])).toBeDefined();

    const longKey = await call('PATCH', `/api/conversations/${id}`, { metadata: { ['k'.repeat(65)]: 'v' } });
    expect(longKey.status).toBe(422);
    const longValue = await call('PATCH', `/api/conversations/${id}`, { metadata: { k: 'v'.repeat(513) } });
    expect(issueAt(longValue.body, ['body', 'metadata', 'k'])).toMatchObject({ type: 'string_too_long' });
    expect((await call('PATCH', `/api/conversations/${id}`, {})).status).toBe(422);
    expect((await call('PATCH', `/api/conversations/${id}`, { title: 'x', extra: 1 })).status).toBe(422);
    expect((await call('PATCH', `/api/conversations/${id}`, { metadata: ['a'] })).status).toBe(422);
    // Nothing of the refused changes stuck.
    expect(Object.keys((await call('GET', `/api/conversations/${id}`)).body.metadata)).toHaveLength(16);
  });
});

describe('messages: bounded reads and paging', () => {
  it('GET /api/conversations/{id} returns the last 100 messages, oldest first', async () => {
    const id = await seedConversation(owner.user.id, { messages: 250 });
    const res = await call('GET', `/api/conversations/${id}`);
    expect(res.status).toBe(200);
    expect(res.body.messages).toHaveLength(100);
    expect(res.body.messages[0].content).toBe('message 151');
    expect(res.body.messages.at(-1).content).toBe('message 250');
    expect(res.body.has_more_messages).toBe(true);
    const short = await seedConversation(owner.user.id, { messages: 3 });
    const few = await call('GET', `/api/conversations/${short}`);
    expect(few.body.messages.map((m: { content: string }) => m.content)).toEqual(['message 1', 'message 2', 'message 3']);
    expect(few.body.has_more_messages).toBe(false);
  });

  it('pages through 250 messages newest first, each once, in order', async () => {
    const id = await seedConversation(owner.user.id, { messages: 250 });
    const seen: string[] = [];
    const sizes: number[] = [];
    let before: string | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const res = await call('GET', `/api/conversations/${id}/messages?limit=100${before ? `&before=${before}` : ''}`);
      expect(res.status).toBe(200);
      sizes.push(res.body.items.length);
      seen.push(...res.body.items.map((m: { content: string }) => m.content));
      expect(res.body.limit).toBe(100);
      before = res.body.next_before;
      if (!res.body.has_more) {
        expect(before).toBeNull();
        break;
      }
      expect(before).toBe(res.body.items.at(-1).id);
    }
    expect(sizes).toEqual([100, 100, 50]);
    expect(seen).toEqual(Array.from({ length: 250 }, (_, i) => `message ${250 - i}`));
    const defaults = await call('GET', `/api/conversations/${id}/messages`);
    expect(defaults.body.items).toHaveLength(50);
    expect(defaults.body.has_more).toBe(true);
  });

  it('refuses limit 0 and 101, a before from another conversation, and another user’s conversation', async () => {
    const id = await seedConversation(owner.user.id, { messages: 5 });
    const elsewhere = await seedConversation(owner.user.id, { messages: 2 });
    const foreignId = (await call('GET', `/api/conversations/${elsewhere}/messages`)).body.items[0].id;
    for (const limit of [0, 101, -1]) {
      const res = await call('GET', `/api/conversations/${id}/messages?limit=${limit}`);
      expect(res.status).toBe(422);
      expect(issueAt(res.body, ['query', 'limit'])).toBeDefined();
    }
    const foreign = await call('GET', `/api/conversations/${id}/messages?before=${foreignId}`);
    expect(foreign.status).toBe(422);
    expect(issueAt(foreign.body, ['query', 'before'])).toMatchObject({ type: 'value_error', input: foreignId });
    expect((await call('GET', `/api/conversations/${id}/messages?before=${randomUUID()}`)).status).toBe(422);
    expect((await call('GET', `/api/conversations/${id}/messages?before=not-an-id`)).status).toBe(422);
    expect((await call('GET', `/api/conversations/${id}/messages`, undefined, other.token)).status).toBe(404);
    expect((await call('GET', `/api/conversations/${id}`, undefined, other.token)).status).toBe(404);
  });
});

describe('GET /api/conversations filters', () => {
  it('by agent_id and by metadata[key]=value, all pairs matching, only the caller’s', async () => {
    const user = await app.signedInUser();
    const agent = await app.request('POST', '/api/agents', { token: user.token, body: { name: 'filter agent' } });
    expect(agent.status).toBe(201);
    const withAgent = await seedConversation(user.user.id, { agentId: agent.body.id });
    const atlas = await seedConversation(user.user.id, { metadata: { project: 'atlas', tier: 'gold' } });
    const atlasSilver = await seedConversation(user.user.id, { metadata: { project: 'atlas', tier: 'silver' } });
    await seedConversation(other.user.id, { metadata: { project: 'atlas', tier: 'gold' } });
    const list = async (query: string) => {
      const res = await app.request('GET', `/api/conversations?${query}`, { token: user.token });
      expect(res.status).toBe(200);
      return (res.body.items as { id: string }[]).map((c) => c.id).sort();
    };
    expect(await list(`agent_id=${agent.body.id}`)).toEqual([withAgent]);
    expect(await list('metadata[project]=atlas')).toEqual([atlas, atlasSilver].sort());
    expect(await list('metadata%5Bproject%5D=atlas&metadata%5Btier%5D=gold')).toEqual([atlas]);
    expect(await list(`metadata[project]=atlas&agent_id=${agent.body.id}`)).toEqual([]);
    expect(await list("metadata[project]=atlas'%20or%201=1--")).toEqual([]);
    expect((await list('')).length).toBe(3);
    const page = await app.request('GET', '/api/conversations?metadata[project]=atlas&size=1', { token: user.token });
    expect(page.body).toMatchObject({ total: 2, page: 1, size: 1, pages: 2 });
  });

  it('refuses a repeated key, 17 filters, a bare or too long key, a bad agent_id — naming each', async () => {
    const get = (query: string) => call('GET', `/api/conversations?${query}`);
    const repeated = await get('metadata[a]=1&metadata[a]=2');
    expect(repeated.status).toBe(422);
    expect(issueAt(repeated.body, ['query', 'metadata[a]'])).toBeDefined();
    const seventeen = await get(Array.from({ length: 17 }, (_, i) => `metadata[k${i}]=v`).join('&'));
    expect(seventeen.status).toBe(422);
    expect(issueAt(seventeen.body, ['query', 'metadata'])).toBeDefined();
    expect((await get(Array.from({ length: 16 }, (_, i) => `metadata[k${i}]=v`).join('&'))).status).toBe(200);
    expect(issueAt((await get('metadata=x')).body, ['query', 'metadata'])).toBeDefined();
    expect((await get('metadata[]=x')).status).toBe(422);
    expect((await get(`metadata[${'k'.repeat(65)}]=x`)).status).toBe(422);
    expect((await get(`metadata[k]=${'v'.repeat(513)}`)).status).toBe(422);
    expect((await get('agent_id=nope')).status).toBe(422);
    expect((await get('unrelated=1')).status).toBe(200);
  });
});

describe('DELETE /api/conversations/{id}', () => {
  it('409 while a run holds it (nothing deleted); 204 after: messages and stream gone, the run kept without content', async () => {
    const { knex, keys, redis, config } = app.services;
    // The test plays the worker: it ends the run on the run's Redis side itself.
    const lease = runProtocol(redis, keys, leaseOptions(config.runs));
    const started = await call('POST', '/api/runs', { mode: 'react', q: 'What is 6*7?' });
    expect(started.status).toBe(202);
    const { run_id: runId, conversation_id: id } = started.body;
    const ref = { id: runId, conversationId: id, userId: owner.user.id };
    expect(await redis.exists(keys.runEvents(ref))).toBe(1);

    const refused = await call('DELETE', `/api/conversations/${id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe('conversation_busy');
    expect(await messageCount(id)).toBe(1);
    expect(await redis.exists(keys.runEvents(ref))).toBe(1);
    expect((await call('GET', `/api/conversations/${id}`)).status).toBe(200);

    // The run ends (as a worker would end it): its hold released, its row final with an answer and usage.
    expect((await lease.admission.release(ref)).outcome).toBe('released');
    await knex('runs').where({ id: runId }).update({
      status: 'failed',
      answer: 'forty-two',
      error: JSON.stringify({ code: 'tool_error', message: 'the tool said: forty-two' }),
      checkpoint: JSON.stringify({ transcript: ['What is 6*7?'] }),
      usage: JSON.stringify({ prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 }),
      finished_at: new Date(),
    });
    await knex('messages').insert({ id: randomUUID(), conversation_id: id, run_id: runId, role: 'assistant', content: 'forty-two' });

    expect((await call('DELETE', `/api/conversations/${id}`, undefined, other.token)).status).toBe(404);
    const deleted = await call('DELETE', `/api/conversations/${id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect(await messageCount(id)).toBe(0);
    expect(await redis.exists(keys.runEvents(ref))).toBe(0);
    expect((await call('GET', `/api/conversations/${id}`)).status).toBe(404);
    expect((await call('DELETE', `/api/conversations/${id}`)).status).toBe(404);

    const run = await call('GET', `/api/runs/${runId}`);
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ id: runId, conversation_id: id, status: 'failed', query: null, answer: null, usage: { total_tokens: 10 } });
    expect(run.body.error).toEqual({ code: 'tool_error', message: 'Removed with its conversation' });
    expect((await knex('runs').where({ id: runId }).first('checkpoint')).checkpoint).toBeNull();
  });

  it('while it is being deleted no run starts on it (any strategy) and no inject is taken', async () => {
    const { engine } = app.services;
    const id = await seedConversation(owner.user.id, { messages: 2 });
    const hold = await engine.holdForDeletion(owner.user.id, id);
    expect(hold).not.toBeNull();
    expect(await engine.holdForDeletion(owner.user.id, id)).toBeNull();
    for (const strategy of ['reject', 'enqueue', 'interrupt', 'rollback']) {
      const res = await call('POST', '/api/runs', { mode: 'react', q: 'hello', conversation_id: id, multitask_strategy: strategy });
      expect(res.status, strategy).toBe(409);
      expect(res.body.error).toBe('conversation_busy');
    }
    const inject = await call('POST', '/api/chat/inject', { conversation_id: id, content: 'late' });
    expect(inject.status).toBe(409);
    expect(inject.body.error).toBe('no_active_execution');
    expect((await call('DELETE', `/api/conversations/${id}`)).status).toBe(409);
    await hold!.release();
    expect(await messageCount(id)).toBe(2);
    expect((await call('DELETE', `/api/conversations/${id}`)).status).toBe(204);
  });

  it('a run queued behind the active one also holds it', async () => {
    const first = await call('POST', '/api/runs', { mode: 'react', q: 'first' });
    const id = first.body.conversation_id;
    const second = await call('POST', '/api/runs', { mode: 'react', q: 'second', conversation_id: id, multitask_strategy: 'enqueue' });
    expect(second.status).toBe(202);
    const ref = { id: first.body.run_id, conversationId: id, userId: owner.user.id };
    // The active run vanishes without handing over (its marker gone): the queued run still holds the conversation.
    await app.services.redis.del(app.services.keys.conversationActive(owner.user.id, id));
    expect(await app.services.redis.get(app.services.keys.conversationActive(owner.user.id, id))).not.toBe(ref.id);
    expect((await call('DELETE', `/api/conversations/${id}`)).status).toBe(409);
    expect(await messageCount(id)).toBe(2);
  });
});

describe('retention (the job’s work, in process)', () => {
  it('deletes conversations idle past the retention in batches, audits each, keeps active and recent ones', async () => {
    const { knex, engine, audit } = app.services;
    const user = await app.signedInUser();
    const idle = await Promise.all(Array.from({ length: 5 }, () => seedConversation(user.user.id, { messages: 3 })));
    const recent = await seedConversation(user.user.id, { messages: 1 });
    const started = await app.request('POST', '/api/runs', { token: user.token, body: { mode: 'react', q: 'still going' } });
    const active = started.body.conversation_id as string;
    const finishedRun = randomUUID();
    await knex('runs').insert({ id: finishedRun, user_id: user.user.id, conversation_id: idle[0], mode: 'react', status: 'succeeded', query: 'old question', answer: 'old answer' });
    await knex('conversations').whereIn('id', [...idle, active]).update({ updated_at: knex.raw(`now() - interval '2 days'`) });

    const eraser = new ConversationEraser(knex, engine, audit, { ...DEFAULT_ERASE, batchSize: 2 });
    const outcome = await eraser.expireIdle(1);
    expect(outcome).toMatchObject({ deleted: 5, batches: 3 });
    const left = await knex('conversations').where({ user_id: user.user.id }).pluck('id');
    expect(left.sort()).toEqual([recent, active].sort());
    expect(await messageCount(idle[0]!)).toBe(0);
    expect(await knex('runs').where({ id: finishedRun }).first('query', 'answer', 'status')).toEqual({ query: null, answer: null, status: 'succeeded' });

    const entries = await knex('audit_log').where({ action: 'conversation.expire' }).whereIn('target_id', idle);
    expect(entries).toHaveLength(5);
    expect(entries[0]).toMatchObject({ credential: 'system', actor_user_id: null, target_type: 'conversation' });
    expect(entries[0].details).toMatchObject({ user_id: user.user.id, retention_days: 1 });
    expect((await eraser.expireIdle(1)).deleted).toBe(0);
  });

  it('two jobs at once delete each conversation once', async () => {
    const { knex, engine, audit } = app.services;
    const user = await app.signedInUser();
    const idle = await Promise.all(Array.from({ length: 40 }, () => seedConversation(user.user.id, { messages: 1 })));
    await knex('conversations').whereIn('id', idle).update({ updated_at: knex.raw(`now() - interval '400 days'`) });
    const eraser = new ConversationEraser(knex, engine, audit, { ...DEFAULT_ERASE, batchSize: 7 });
    const [a, b] = await Promise.all([eraser.expireIdle(365), eraser.expireIdle(365)]);
    expect(a.deleted + b.deleted).toBe(40);
    expect(await knex('audit_log').where({ action: 'conversation.expire' }).whereIn('target_id', idle).count({ n: '*' })).toEqual([{ n: '40' }]);
  });
});

describe('DELETE /api/admin/users/{id}', () => {
  it('removes the user’s conversations, messages, runs and their streams, files, knowledge bases and keys', async () => {
    const { knex, keys, redis } = app.services;
    const admin = await app.signedInUser('admin');
    const doomed = await app.signedInUser();
    const userId = doomed.user.id;
    await app.services.apiKeys.create(userId, { name: 'doomed key' });
    const kb = await app.request('POST', '/api/knowledge-bases', { token: doomed.token, body: { name: 'doomed kb' } });
    expect(kb.status).toBe(201);
    const conversation = await seedConversation(userId, { messages: 4 });
    const runId = randomUUID();
    await knex('runs').insert({ id: runId, user_id: userId, conversation_id: conversation, mode: 'react', status: 'succeeded', query: 'q', answer: 'a' });
    const stream = keys.runEvents({ id: runId, userId });
    await redis.xadd(stream, '*', 'type', 'done', 'data', '{}');
    const fileId = randomUUID();
    await knex('files').insert({ id: fileId, user_id: userId, filename: 'a.png', content_type: 'image/png', size_bytes: 1, width: 1, height: 1, sha256: 'x' });

    const res = await app.request('DELETE', `/api/admin/users/${userId}`, { token: admin.token });
    expect(res.status).toBe(204);
    for (const table of ['conversations', 'runs', 'files', 'knowledge_bases', 'api_keys']) {
      expect(await knex(table).where({ user_id: userId }).count({ n: '*' }), table).toEqual([{ n: '0' }]);
    }
    expect(await messageCount(conversation)).toBe(0);
    expect(await knex('file_blobs').where({ file_id: fileId }).count({ n: '*' })).toEqual([{ n: '0' }]);
    expect(await redis.exists(stream)).toBe(0);
  });
});
