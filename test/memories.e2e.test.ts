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
    const spaces = (await stack.api(key, 'GET', '/api/memory-namespaces')).body;
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

const react = (key: string, body: Record<string, unknown>) => stream(`${stack.url}/api/react`, { token: key, body });
const answerOf = (events: Awaited<ReturnType<typeof react>>['events']) => ofType(events, 'answer')[0]?.data.content ?? '';

describe('agents with memory', () => {
  it('remember in one conversation and recall in the next: the memory event names what the run was given, and the local model quotes it', async () => {
    const { key } = await stack.user();
    const agent = (await stack.api(key, 'POST', '/api/agents', { name: 'friend', memory: true })).body;
    const first = await react(key, { q: 'Remember that my favourite colour is teal.', agent_id: agent.id });
    expect(ofType(first.events, 'done')[0]!.data.status).toBe('succeeded');
    expect(ofType(first.events, 'memory')[0]!.data).toEqual({ ids: [], memories: [] });
    const call = ofType(first.events, 'tool_call')[0]!.data;
    expect(call).toMatchObject({ name: 'remember', arguments: { content: 'my favourite colour is teal.' } });
    expect(ofType(first.events, 'tool_result')[0]!.data).toMatchObject({ name: 'remember', is_error: false });
    expect(answerOf(first.events)).toContain('I will remember that');
    const stored = (await stack.api(key, 'GET', `/api/memories?namespace=${agent.id}`)).body;
    expect(stored.items.map((m: any) => m.content)).toEqual(['my favourite colour is teal.']);
    await stack.api(key, 'POST', '/api/memories', { namespace: 'user', content: 'The user works as a nurse in Porto' });

    // A new conversation of the same agent: the memory is given before the first model call.
    const second = await react(key, { q: 'What is my favourite colour?', agent_id: agent.id });
    expect(second.events.map((e) => e.type).indexOf('memory')).toBeLessThan(second.events.map((e) => e.type).indexOf('token'));
    const memory = ofType(second.events, 'memory')[0]!.data;
    expect(memory.ids[0]).toBe(stored.items[0].id);
    expect(memory.ids).toHaveLength(2);
    expect(memory.memories[0]).toMatchObject({ id: stored.items[0].id, namespace: agent.id, content: 'my favourite colour is teal.' });
    expect(answerOf(second.events)).toContain('"my favourite colour is teal."');
    expect(second.events.some((e) => e.type === 'tool_call')).toBe(false);
    // The `user` namespace is every agent's.
    const other = (await stack.api(key, 'POST', '/api/agents', { name: 'other', memory: true })).body;
    const work = await react(key, { q: 'Where do I work as a nurse?', agent_id: other.id });
    expect(ofType(work.events, 'memory')[0]!.data.memories.map((m) => m.content)).toEqual(['The user works as a nurse in Porto']);
    expect(answerOf(work.events)).toContain('nurse in Porto');
  });

  it('leave agents without memory as they were: no memory event, no memory tools, nothing remembered', async () => {
    const { key } = await stack.user();
    const agent = (await stack.api(key, 'POST', '/api/agents', { name: 'plain' })).body;
    expect(agent.memory).toBe(false);
    await stack.api(key, 'POST', '/api/memories', { namespace: 'user', content: 'my favourite colour is teal' });
    const run = await react(key, { q: 'Remember that my favourite colour is green.', agent_id: agent.id });
    expect(run.events.some((e) => e.type === 'memory' || e.type === 'tool_call')).toBe(false);
    expect(answerOf(run.events)).not.toContain('teal');
    expect((await stack.api(key, 'GET', '/api/memories')).body.total).toBe(1);
  });

  it("never recall another user's memories, and memory is versioned with the agent", async () => {
    const alice = await stack.user();
    const bob = await stack.user();
    const aliceAgent = (await stack.api(alice.key, 'POST', '/api/agents', { name: 'a', memory: true })).body;
    await react(alice.key, { q: 'Remember that my favourite colour is teal', agent_id: aliceAgent.id });
    const bobAgent = (await stack.api(bob.key, 'POST', '/api/agents', { name: 'b' })).body;
    const patched = (await stack.api(bob.key, 'PATCH', `/api/agents/${bobAgent.id}`, { memory: true })).body;
    expect(patched).toMatchObject({ memory: true, version: 2 });
    const versions = (await stack.api(bob.key, 'GET', `/api/agents/${bobAgent.id}/versions`)).body.items;
    expect(versions.map((v: any) => [v.version, v.memory])).toEqual([[2, true], [1, false]]);
    const run = await react(bob.key, { q: 'What is my favourite colour?', agent_id: bobAgent.id });
    expect(ofType(run.events, 'memory')[0]!.data.ids).toEqual([]);
    expect(answerOf(run.events)).not.toContain('teal');
    // Running version 1 (memory off) of the same agent through its version: no memory.
    expect((await stack.api(bob.key, 'POST', `/api/agents/${bobAgent.id}/versions/1/restore`)).body).toMatchObject({ memory: false, version: 3 });
  });

  it('two runs writing at once lose nothing; a full memory is an error result the run reads, not a failed run', async () => {
    const { key } = await stack.user();
    const agent = (await stack.api(key, 'POST', '/api/agents', { name: 'busy', memory: true })).body;
    const facts = Array.from({ length: 6 }, (_, i) => `fact ${i} is that the number ${i} is lucky`);
    const runs = await Promise.all(facts.map((fact) => react(key, { q: `Remember that ${fact}`, agent_id: agent.id })));
    expect(runs.map((r) => ofType(r.events, 'done')[0]!.data.status)).toEqual(facts.map(() => 'succeeded'));
    const stored = (await stack.api(key, 'GET', '/api/memories?size=100')).body;
    expect(stored.items.map((m: any) => m.content).sort()).toEqual([...facts].sort());
    // Fill up to MEMORIES_PER_USER (12): the next remember is refused, and the run still answers.
    await Promise.all(Array.from({ length: 6 }, (_, i) => stack.api(key, 'POST', '/api/memories', { namespace: 'user', content: `filler ${i}` })));
    const full = await react(key, { q: 'Remember that my cat is called Miso', agent_id: agent.id });
    expect(ofType(full.events, 'tool_result')[0]!.data).toMatchObject({ name: 'remember', is_error: true, output: expect.stringContaining('MEMORIES_PER_USER') });
    expect(ofType(full.events, 'done')[0]!.data.status).toBe('succeeded');
    expect((await stack.api(key, 'GET', '/api/memories')).body.total).toBe(12);
  });

  it("give the model only the memories that fit in a tenth of its context window, and name exactly those", async () => {
    const { key } = await stack.user();
    const agent = (await stack.api(key, 'POST', '/api/agents', { name: 'small', memory: true, context_window: 1024 })).body;
    const long = (await stack.api(key, 'POST', '/api/memories', { namespace: 'user', content: `My favourite colour story: ${'teal and turquoise and cyan '.repeat(60)}` })).body;
    const short = (await stack.api(key, 'POST', '/api/memories', { namespace: 'user', content: 'My favourite colour is teal' })).body;
    const run = await react(key, { q: 'What is my favourite colour? teal turquoise cyan', agent_id: agent.id });
    expect(ofType(run.events, 'done')[0]!.data.status).toBe('succeeded');
    const given = ofType(run.events, 'memory')[0]!.data.ids;
    expect(given).toEqual([short.id]);
    expect(given).not.toContain(long.id);
    expect(answerOf(run.events)).toContain('"My favourite colour is teal"');
  });

  it("deleting a user deletes their memories", async () => {
    const admin = await stack.user('admin');
    const { key, user } = await stack.user();
    await stack.api(key, 'POST', '/api/memories', { namespace: 'user', content: 'soon forgotten' });
    expect((await stack.api(admin.key, 'DELETE', `/api/admin/users/${user.id}`)).status).toBe(204);
    const { rows } = await stack.knex.raw('select (select count(*)::int from memories where user_id = :u) as memories, (select count(*)::int from memory_counts where user_id = :u) as counts', { u: user.id });
    expect(rows[0]).toEqual({ memories: 0, counts: 0 });
  });
});
