import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.js';
import { stream, ofType } from './support/sse.js';

/**
 * Memory (DESIGN §25) through built web and worker processes: the API (list, search by meaning,
 * add, edit, delete one or a namespace), its bounds under racing writers, isolation between users,
 * and agents with `memory: true` that remember and recall across conversations.
 */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ workers: 1, env: { LOCAL_MODEL_TOKEN_DELAY_MS: '0', MEMORIES_PER_USER: '12' } });
});
afterAll(async () => {
  await stack.stop();
});

const add = (key: string, namespace: string, content: string, metadata?: Record<string, unknown>) => stack.api(key, 'POST', '/api/memories', { namespace, content, ...(metadata ? { metadata } : {}) });

describe('the memories API', () => {
  it('adds, lists by namespace, searches by meaning, edits and deletes', async () => {
    const { key } = await stack.user();
    const agent = (await stack.api(key, 'POST', '/api/agents', { name: 'helper', memory: true })).body;
    expect(agent.memory).toBe(true);
    const teal = await add(key, 'user', 'My favourite colour is teal', { source: 'chat' });
    expect(teal.status).toBe(201);
    expect(teal.body).toMatchObject({ namespace: 'user', content: 'My favourite colour is teal', metadata: { source: 'chat' } });
    await add(key, agent.id, 'The user lives in Lisbon, Portugal');
    await add(key, agent.id, 'The user is allergic to peanuts');
    const all = (await stack.api(key, 'GET', '/api/memories')).body;
    expect(all).toMatchObject({ total: 3, page: 1 });
    expect(all.items.map((m: any) => m.content)).toEqual(['The user is allergic to peanuts', 'The user lives in Lisbon, Portugal', 'My favourite colour is teal']);
    const mine = (await stack.api(key, 'GET', `/api/memories?namespace=${agent.id}`)).body;
    expect(mine.total).toBe(2);
    expect(mine.items.every((m: any) => m.namespace === agent.id)).toBe(true);
    // By meaning: the closest first, each with its score.
    const found = (await stack.api(key, 'GET', `/api/memories?q=${encodeURIComponent('what is my favourite colour?')}`)).body;
    expect(found.items[0].content).toBe('My favourite colour is teal');
    expect(found.items[0].score).toBeGreaterThan(found.items[1].score);
    const lisbon = (await stack.api(key, 'GET', `/api/memories?namespace=${agent.id}&q=lives+in+Lisbon`)).body;
    expect(lisbon.items.map((m: any) => m.content)[0]).toBe('The user lives in Lisbon, Portugal');
    expect(lisbon.total).toBe(2);
    const spaces = (await stack.api(key, 'GET', '/api/memories/namespaces')).body;
    expect(spaces.items).toEqual([
      { namespace: 'user', agent_id: null, agent_name: null, count: 1 },
      { namespace: agent.id, agent_id: agent.id, agent_name: 'helper', count: 2 },
    ]);
    // Edit: the content is embedded again, so search follows it.
    const edited = await stack.api(key, 'PATCH', `/api/memories/${teal.body.id}`, { content: 'My favourite colour is crimson' });
    expect(edited.body.content).toBe('My favourite colour is crimson');
    expect((await stack.api(key, 'GET', '/api/memories?q=crimson')).body.items[0].id).toBe(teal.body.id);
    expect((await stack.api(key, 'GET', `/api/memories/${teal.body.id}`)).body.metadata).toEqual({ source: 'chat' });
    expect((await stack.api(key, 'DELETE', `/api/memories/${teal.body.id}`)).status).toBe(204);
    expect((await stack.api(key, 'GET', `/api/memories/${teal.body.id}`)).status).toBe(404);
    expect((await stack.api(key, 'DELETE', `/api/memories/${teal.body.id}`)).status).toBe(404);
    expect((await stack.api(key, 'DELETE', `/api/memories?namespace=${agent.id}`)).body).toEqual({ deleted: 2 });
    expect((await stack.api(key, 'GET', '/api/memories')).body.total).toBe(0);
  });

  it('refuses bad input with a 422 naming the field, and loses nothing', async () => {
    const { key } = await stack.user();
    const cases: [unknown, string][] = [
      [{ namespace: 'user', content: 'x'.repeat(2001) }, '"loc":["body","content"],"msg":"String should have at most 2000 characters"'],
      [{ namespace: 'user', content: '   ' }, '"loc":["body","content"],"msg":"String should have at least 1 character"'],
      [{ namespace: 'user' }, 'content'],
      [{ namespace: 'agents', content: 'x' }, 'or the id of one of your agents'],
      [{ namespace: 'user', content: 5 }, 'Input should be a valid string'],
      [{ namespace: 'user', content: 'x', metadata: [1] }, 'metadata must be a JSON object'],
      [{ namespace: 'user', content: 'x', metadata: { big: 'y'.repeat(17_000) } }, 'metadata is over'],
      [{ namespace: 'user', content: 'x', user_id: 'someone' }, 'user_id'],
    ];
    for (const [body, text] of cases) {
      const res = await stack.api(key, 'POST', '/api/memories', body);
      expect(res.status, JSON.stringify(body).slice(0, 60)).toBe(422);
      expect(JSON.stringify(res.body)).toContain(text);
    }
    expect((await stack.api(key, 'POST', '/api/memories', '[not json')).status).toBe(422);
    expect((await stack.api(key, 'GET', '/api/memories?namespace=nope')).status).toBe(422);
    expect((await stack.api(key, 'GET', '/api/memories?size=1000')).status).toBe(422);
    expect((await stack.api(key, 'GET', `/api/memories?q=${'q'.repeat(2001)}`)).status).toBe(422);
    expect((await stack.api(key, 'DELETE', '/api/memories')).status).toBe(422);
    expect((await stack.api(key, 'GET', '/api/memories/not-a-uuid')).status).toBe(422);
    expect((await stack.api(key, 'PATCH', '/api/memories/00000000-0000-4000-8000-000000000000', {})).status).toBe(422);
    // A namespace that is no agent of the user's.
    expect((await add(key, '00000000-0000-4000-8000-000000000000', 'x')).status).toBe(404);
    expect((await stack.api(key, 'GET', '/api/memories')).body.total).toBe(0);
  });

  it("keeps each user's memories their own: another user's answers 404 on every verb, and their lists never show it", async () => {
    const alice = await stack.user();
    const bob = await stack.user();
    const secret = (await add(alice.key, 'user', 'Alice keeps her spare key under the blue flowerpot')).body;
    const aliceAgent = (await stack.api(alice.key, 'POST', '/api/agents', { name: 'a', memory: true })).body;
    for (const [method, body] of [['GET'], ['PATCH', { content: 'mine now' }], ['DELETE']] as const) {
      expect((await stack.api(bob.key, method, `/api/memories/${secret.id}`, body)).status, method).toBe(404);
    }
    expect((await add(bob.key, aliceAgent.id, 'planted')).status).toBe(404);
    expect((await stack.api(bob.key, 'GET', '/api/memories?q=spare+key+flowerpot')).body.total).toBe(0);
    expect((await stack.api(bob.key, 'DELETE', '/api/memories?namespace=user')).body).toEqual({ deleted: 0 });
    expect((await stack.api(alice.key, 'GET', `/api/memories/${secret.id}`)).body.content).toContain('blue flowerpot');
  });

  it('holds at most MEMORIES_PER_USER under racing writes (409 memory_limit naming it), and deleting makes room', async () => {
    const { key, user } = await stack.user();
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => add(key, 'user', `fact number ${i}`)));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(12);
    const refused = answers.filter((a) => a.status === 409);
    expect(refused).toHaveLength(8);
    expect(refused[0]!.body).toMatchObject({ error: 'memory_limit', message: expect.stringContaining('MEMORIES_PER_USER') });
    const listed = (await stack.api(key, 'GET', '/api/memories?size=100')).body;
    expect(listed.total).toBe(12);
    expect(new Set(listed.items.map((m: any) => m.content)).size).toBe(12);
    // Racing deletes and adds: the count stays exact.
    const victims = listed.items.slice(0, 5);
    await Promise.all([...victims.map((m: any) => stack.api(key, 'DELETE', `/api/memories/${m.id}`)), ...victims.map((m: any) => stack.api(key, 'DELETE', `/api/memories/${m.id}`))]);
    const refill = await Promise.all(Array.from({ length: 9 }, (_, i) => add(key, 'user', `refill ${i}`)));
    expect(refill.filter((a) => a.status === 201)).toHaveLength(5);
    expect((await stack.api(key, 'GET', '/api/memories')).body.total).toBe(12);
    const { rows } = await stack.knex.raw('select (select count from memory_counts where user_id = :u) as kept, (select count(*)::int from memories where user_id = :u) as rows', { u: user.id });
    expect(rows[0]).toEqual({ kept: 12, rows: 12 });
  });
});
