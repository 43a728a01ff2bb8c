import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';

/** Agents, conversations and malformed run/inject bodies through the in-process app. */
let app: TestApp;
let token: string;
let userId: string;
beforeAll(async () => {
  app = await startTestApp();
  const signedIn = await app.signedInUser();
  token = signedIn.token;
  userId = signedIn.user.id;
});
afterAll(() => app.close());

describe('agents', () => {
  it('POST with full access; GET list and one with the agents scope; another user’s → 404', async () => {
    const created = await app.request('POST', '/api/agents', { token, body: { name: 'Calc', instructions: 'Be brief.', max_iterations: 4 } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Calc', instructions: 'Be brief.', model: null, tools: ['calculator', 'current_time'], max_iterations: 4, knowledge_base_ids: [] });
    expect(created.body.user_id).toBeUndefined();
    const scoped = (await app.request('POST', '/api/me/api-keys', { token, body: { name: 'agents', scopes: 'agents' } })).body.key;
    const list = await app.request('GET', '/api/agents?size=5', { token: scoped });
    expect(list.body).toMatchObject({ total: 1, page: 1, size: 5, pages: 1 });
    expect((await app.request('GET', `/api/agents/${created.body.id}`, { token: scoped })).body.name).toBe('Calc');
    expect((await app.request('POST', '/api/agents', { token: scoped, body: { name: 'x' } })).status).toBe(403);
    const other = await app.signedInUser();
    expect((await app.request('GET', `/api/agents/${created.body.id}`, { token: other.token })).status).toBe(404);
    const restricted = await app.signedInUser('restricted');
    expect((await app.request('POST', '/api/agents', { token: restricted.token, body: { name: 'x' } })).body.error).toBe('forbidden');
  });
});

describe('conversations', () => {
  it('lists only the caller’s, paginated; unknown → 404', async () => {
    const list = await app.request('GET', '/api/conversations', { token });
    expect(list.body).toMatchObject({ items: [], total: 0, page: 1, size: 20, pages: 0 });
    expect((await app.request('GET', '/api/conversations?size=0', { token })).status).toBe(422);
    expect((await app.request('GET', '/api/conversations/00000000-0000-4000-8000-000000000000', { token })).status).toBe(404);
    expect((await app.request('GET', '/api/conversations/nope', { token })).status).toBe(422);
  });
});

const uuid = '00000000-0000-4000-8000-000000000000';
const runBodies: [string, unknown, string][] = [
  ['no q', {}, 'missing'],
  ['q number', { q: 1 }, 'string_type'],
  ['q null', { q: null }, 'string_type'],
  ['q empty', { q: '' }, 'string_too_short'],
  ['q blank', { q: '   ' }, 'string_too_short'],
  ['q huge', { q: 'x'.repeat(40_000) }, 'string_too_long'],
  ['q array', { q: ['a'] }, 'string_type'],
  ['conversation_id not uuid', { q: 'a', conversation_id: 'abc' }, 'uuid_parsing'],
  ['conversation_id number', { q: 'a', conversation_id: 5 }, 'string_type'],
  ['agent_id not uuid', { q: 'a', agent_id: "1' or 1=1" }, 'uuid_parsing'],
  ['agent_id object', { q: 'a', agent_id: {} }, 'string_type'],
  ['token number', { q: 'a', token: 42 }, 'string_type'],
  ['image_ids list of numbers', { q: 'a', image_ids: [1] }, 'value_error'],
  ['image_ids number', { q: 'a', image_ids: 7 }, 'value_error'],
  ['image_ids not ids', { q: 'a', image_ids: 'cat.png, dog.png' }, 'value_error'],
  ['user_metadata object', { q: 'a', user_metadata: { a: 1 } }, 'string_type'],
  ['doc_mode number', { q: 'a', doc_mode: 3 }, 'literal_error'],
  ['doc_mode unknown', { q: 'a', doc_mode: 'strict' }, 'literal_error'],
  ['unknown field', { q: 'a', stream: true }, 'extra_forbidden'],
  ['array body', [], 'model_attributes_type'],
  ['string body', 'q', 'model_attributes_type'],
  ['NUL in q', { q: 'a\u0000' }, 'string_pattern_mismatch'],
];
const injectBodies: [string, unknown, string][] = [
  ['no body fields', {}, 'missing'],
  ['no content', { conversation_id: uuid }, 'missing'],
  ['no conversation', { content: 'x' }, 'missing'],
  ['content number', { conversation_id: uuid, content: 1 }, 'string_type'],
  ['content empty', { conversation_id: uuid, content: '' }, 'string_too_short'],
  ['content huge', { conversation_id: uuid, content: 'x'.repeat(40_000) }, 'string_too_long'],
  ['conversation not uuid', { conversation_id: 'x', content: 'y' }, 'uuid_parsing'],
  ['conversation null', { conversation_id: null, content: 'y' }, 'string_type'],
  ['extra token', { conversation_id: uuid, content: 'y', token: 'x' }, 'extra_forbidden'],
  ['array body', [{ conversation_id: uuid, content: 'y' }], 'model_attributes_type'],
];
const agentBodies: [string, unknown, string][] = [
  ['no name', {}, 'missing'],
  ['unknown tool', { name: 'a', tools: ['rm -rf'] }, 'literal_error'],
  ['tools not array', { name: 'a', tools: 'calculator' }, 'list_type'],
  ['max_iterations 0', { name: 'a', max_iterations: 0 }, 'greater_than_equal'],
  ['max_iterations 1000', { name: 'a', max_iterations: 1000 }, 'less_than_equal'],
  ['max_iterations float', { name: 'a', max_iterations: 2.5 }, 'int_from_float'],
  ['max_iterations string', { name: 'a', max_iterations: '3' }, 'int_type'],
  ['kb ids not uuids', { name: 'a', knowledge_base_ids: ['x'] }, 'uuid_parsing'],
];

describe('malformed bodies never answer 500', () => {
  it.each([
    ...runBodies.map(([name, body, type]) => ['POST /api/react ' + name, '/api/react', body, type] as const),
    ...runBodies.slice(0, 8).map(([name, body, type]) => ['POST /api/dag ' + name, '/api/dag', body, type] as const),
    ...injectBodies.map(([name, body, type]) => ['POST /api/chat/inject ' + name, '/api/chat/inject', body, type] as const),
    ...agentBodies.map(([name, body, type]) => ['POST /api/agents ' + name, '/api/agents', body, type] as const),
  ])('%s → 422 %s', async (_name, path, body, type) => {
    const res = await app.request('POST', path, { token, body });
    expect(res.status).toBe(422);
    expect(res.body.detail.map((d: { type: string }) => d.type)).toContain(type);
  });

  it('bad JSON and an empty body on the streaming endpoint → 422', async () => {
    expect((await app.request('POST', '/api/react', { token, raw: '{"q": "a"' })).body.detail[0].type).toBe('json_invalid');
    expect((await app.request('POST', '/api/react', { token })).body.detail[0].type).toBe('missing');
  });

  it('nothing was stored by any of them', async () => {
    expect(await app.services.knex('conversations').where({ user_id: userId }).count('* as n').first()).toEqual({ n: '0' });
    expect(await app.services.knex('runs').where({ user_id: userId }).count('* as n').first()).toEqual({ n: '0' });
  });
});
