import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestApp, type TestApp } from './support/app.js';
import { createDatabase } from './support/database.js';
import { createKnex } from '../src/db/knex.js';
import { RunStore } from '../src/engine/run-store.js';

/**
 * Agents change and are versioned, and are deleted (DESIGN §20), on a database of their own (its
 * schedules must meet no other test's schedule worker): PATCH → the next version, the versions
 * list, restore as a new version, hostile PATCHes and restores, concurrent PATCHes, what a run
 * reads of its version (RunStore.load), DELETE and everything that may no longer name the agent,
 * its schedules switched off, and the migration's backfill. No worker runs here: runs stay queued.
 */
let database: Awaited<ReturnType<typeof createDatabase>>;
let app: TestApp;

beforeAll(async () => {
  database = await createDatabase({ migrate: true });
  // A gateway is configured (never called: agents are only saved here) so gateway settings can be checked, and private destinations refused as in production.
  app = await startTestApp({ env: { DATABASE_URL: database.url, GATEWAY_URL: 'http://127.0.0.1:9', GATEWAY_API_KEY: 'unused', OUTBOUND_ALLOW_PRIVATE: 'false' } });
});
afterAll(async () => {
  await app?.close();
  await database?.drop();
});

const as = (token: string) => ({
  get: (path: string) => app.request('GET', path, { token }),
  post: (path: string, body?: unknown) => app.request('POST', path, { token, body }),
  patch: (path: string, body: unknown) => app.request('PATCH', path, { token, body }),
  delete: (path: string) => app.request('DELETE', path, { token }),
});
type Api = ReturnType<typeof as>;

async function newAgent(api: Api, body: Record<string, unknown> = {}) {
  const res = await api.post('/api/agents', { name: 'helper', instructions: 'Be brief.', tools: ['calculator'], max_iterations: 3, ...body });
  expect(res.status).toBe(201);
  return res.body as Record<string, unknown> & { id: string; version: number };
}

/** An agent record's configuration: what a version keeps. */
const configOf = ({ id: _id, version: _version, created_at: _created, updated_at: _updated, ...config }: Record<string, unknown>) => config;

describe('versions', () => {
  it('PATCH makes version 2, the list shows both newest first, restore of 1 makes version 3 with its fields', async () => {
    const api = as((await app.signedInUser()).token);
    const agent = await newAgent(api);
    expect(agent.version).toBe(1);

    const patched = await api.patch(`/api/agents/${agent.id}`, { instructions: 'Be thorough.', max_iterations: 5 });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({ ...agent, instructions: 'Be thorough.', max_iterations: 5, version: 2, updated_at: expect.any(String) });
    expect((await api.get(`/api/agents/${agent.id}`)).body).toEqual(patched.body);
    expect((await api.get('/api/agents')).body.items[0]).toEqual(patched.body);

    const versions = await api.get(`/api/agents/${agent.id}/versions`);
    expect(versions.status).toBe(200);
    expect(versions.body).toMatchObject({ total: 2, page: 1, size: 20, pages: 1 });
    expect(versions.body.items).toEqual([
      { version: 2, ...configOf(patched.body), created_at: expect.any(String) },
      { version: 1, ...configOf(agent), created_at: expect.any(String) },
    ]);
    const second = await api.get(`/api/agents/${agent.id}/versions?size=1&page=2`);
    expect(second.body).toMatchObject({ total: 2, page: 2, size: 1, pages: 2, items: [{ version: 1, instructions: 'Be brief.' }] });

    const restored = await api.post(`/api/agents/${agent.id}/versions/1/restore`);
    expect(restored.status).toBe(200);
    expect(restored.body.version).toBe(3);
    expect(configOf(restored.body)).toEqual(configOf(agent));
    const after = await api.get(`/api/agents/${agent.id}/versions`);
    expect(after.body.total).toBe(3);
    expect(after.body.items.map((v: { version: number }) => v.version)).toEqual([3, 2, 1]);
    expect(after.body.items[0]).toEqual({ version: 3, ...configOf(agent), created_at: expect.any(String) });
  });

  it('restoring a version that does not exist → 404, a version number that is not one → 422; nothing changes', async () => {
    const api = as((await app.signedInUser()).token);
    const agent = await newAgent(api);
    const missing = await api.post(`/api/agents/${agent.id}/versions/2/restore`);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: 'not_found', message: expect.stringContaining('version 2') });
    for (const n of ['0', '-1', 'x', '1.5', '99999999999']) expect((await api.post(`/api/agents/${agent.id}/versions/${n}/restore`)).status, n).toBe(422);
    expect((await api.get(`/api/agents/${agent.id}`)).body.version).toBe(1);
    expect((await api.get(`/api/agents/${agent.id}/versions`)).body.total).toBe(1);
  });

  it('a restored version leaves out the knowledge bases and connectors deleted since', async () => {
    const { token } = await app.signedInUser();
    const api = as(token);
    const kb = (await api.post('/api/knowledge-bases', { name: 'docs' })).body;
    const agent = await newAgent(api, { knowledge_base_ids: [kb.id] });
    await api.patch(`/api/agents/${agent.id}`, { knowledge_base_ids: [] });
    expect((await api.delete(`/api/knowledge-bases/${kb.id}`)).status).toBe(204);
    const restored = await api.post(`/api/agents/${agent.id}/versions/1/restore`);
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({ version: 3, knowledge_base_ids: [], instructions: 'Be brief.' });
  });

  it('concurrent PATCHes get one version each', async () => {
    const api = as((await app.signedInUser()).token);
    const agent = await newAgent(api);
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => api.patch(`/api/agents/${agent.id}`, { instructions: `edit ${i}` })));
    expect(results.map((r) => r.status)).toEqual(Array(12).fill(200));
    const numbers = results.map((r) => r.body.version as number).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: 12 }, (_, i) => i + 2));
    // Each answer is the version it made, as the list keeps it; the agent is the last one.
    const versions = (await api.get(`/api/agents/${agent.id}/versions?size=100`)).body;
    expect(versions.total).toBe(13);
    for (const result of results) expect(versions.items.find((v: { version: number }) => v.version === result.body.version).instructions).toBe(result.body.instructions);
    const current = (await api.get(`/api/agents/${agent.id}`)).body;
    expect(current.version).toBe(13);
    expect(current.instructions).toBe(versions.items[0].instructions);
  });
});

describe('hostile PATCHes', () => {
  it.each([
    ['no field', {}, undefined],
    ['an unknown field', { colour: 'red' }, 'colour'],
    ['an empty name', { name: '  ' }, 'name'],
    ['null instructions', { instructions: null }, 'instructions'],
    ['max_iterations of 0', { max_iterations: 0 }, 'max_iterations'],
    ['max_iterations as text', { max_iterations: '5' }, 'max_iterations'],
    ['an unknown tool', { tools: ['shell'] }, 'tools'],
    ['a knowledge base that is not the caller’s', { knowledge_base_ids: [randomUUID()] }, 'knowledge_base_ids'],
    ['a connector that is not the caller’s', { connector_ids: [randomUUID()] }, 'connector_ids'],
    ['a model name with spaces', { model: 'gpt 4' }, 'model'],
    ['minimal effort outside its family (the gateway rules, as create)', { model: 'gpt-4.1', reasoning_effort: 'minimal' }, 'reasoning_effort'],
    ['an mcp gateway tool on a link-local (metadata) address (the outbound policy, as create)', { model: 'gpt-4.1', gateway_tools: [{ type: 'mcp', server_label: 'x', server_url: 'http://169.254.169.254/sse' }] }, 'gateway_tools'],
  ])('%s → 422, and no version is made', async (_what, body, field) => {
    const api = as((await app.signedInUser()).token);
    const agent = await newAgent(api);
    const res = await api.patch(`/api/agents/${agent.id}`, body);
    expect(res.status).toBe(422);
    if (field) expect(res.body.detail.map((d: { loc: unknown[] }) => d.loc[1])).toContain(field);
    expect((await api.get(`/api/agents/${agent.id}`)).body).toEqual(agent);
    expect((await api.get(`/api/agents/${agent.id}/versions`)).body.total).toBe(1);
  });

  it('the cross-field rules judge the whole result: a field sent against one kept', async () => {
    const api = as((await app.signedInUser()).token);
    const agent = await newAgent(api, { model: 'gpt-4.1', reasoning_effort: 'high' });
    const res = await api.patch(`/api/agents/${agent.id}`, { api_format: 'native' });
    expect(res.status).toBe(422);
    expect(res.body.detail[0].loc).toEqual(['body', 'reasoning_effort']);
    // Clearing a nullable field is a change like any other.
    const cleared = await api.patch(`/api/agents/${agent.id}`, { api_format: 'native', reasoning_effort: null, thinking_budget: 512 });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ version: 2, api_format: 'native', reasoning_effort: null, thinking_budget: 512 });
  });

  it("another user's agent is 404 on every verb, and stays as it was", async () => {
    const owner = as((await app.signedInUser()).token);
    const agent = await newAgent(owner);
    const stranger = as((await app.signedInUser()).token);
    const answers = [
      await stranger.get(`/api/agents/${agent.id}`),
      await stranger.patch(`/api/agents/${agent.id}`, { name: 'mine now' }),
      await stranger.get(`/api/agents/${agent.id}/versions`),
      await stranger.post(`/api/agents/${agent.id}/versions/1/restore`),
      await stranger.delete(`/api/agents/${agent.id}`),
      await stranger.patch(`/api/agents/${randomUUID()}`, { name: 'nobody' }),
    ];
    expect(answers.map((r) => r.status)).toEqual([404, 404, 404, 404, 404, 404]);
    expect((await owner.get(`/api/agents/${agent.id}`)).body).toEqual(agent);
  });

  it('changing, restoring and deleting need full access; a restricted user may read the versions', async () => {
    const owner = await app.signedInUser('restricted');
    // Restricted users cannot create agents: this one is made for them.
    const fields = { name: 'given', instructions: '', tools: [], max_iterations: 8, knowledge_base_ids: [], connector_ids: [], tool_approval: 'never', api_format: 'chat', reasoning_effort: null, thinking_budget: null, max_tokens: null, gateway_tools: [] };
    const agent = await app.services.agents.create(owner.user.id, fields as unknown as Parameters<typeof app.services.agents.create>[1]);
    const api = as(owner.token);
    expect((await api.patch(`/api/agents/${agent.id}`, { name: 'x' })).status).toBe(403);
    expect((await api.post(`/api/agents/${agent.id}/versions/1/restore`)).status).toBe(403);
    expect((await api.delete(`/api/agents/${agent.id}`)).status).toBe(403);
    expect((await api.get(`/api/agents/${agent.id}/versions`)).body.total).toBe(1);
  });
});

describe('a run and its version', () => {
  it('records the version it started with, and its worker reads that version after the agent changed (the live agent without one)', async () => {
    const { token } = await app.signedInUser();
    const api = as(token);
    const agent = await newAgent(api);
    const started = await api.post('/api/runs', { mode: 'react', q: 'What is 2+2?', agent_id: agent.id });
    expect(started.status).toBe(202);
    await api.patch(`/api/agents/${agent.id}`, { instructions: 'Changed.', tools: [], max_iterations: 1 });
    expect((await api.get(`/api/runs/${started.body.run_id}`)).body).toMatchObject({ agent_id: agent.id, agent_version: 1 });

    const store = new RunStore(app.services.knex, app.services.models);
    const bound: Parameters<RunStore['load']>[1] = { messages: 10, tokens: 100_000, windows: 1 };
    const loaded = await store.load(started.body.run_id, bound);
    expect(loaded!.agent).toMatchObject({ id: agent.id, version: 1, instructions: 'Be brief.', tools: ['calculator'], max_iterations: 3 });
    // A run from before versions reads the agent as it is.
    await app.services.knex('runs').where({ id: started.body.run_id }).update({ agent_version: null });
    expect((await store.load(started.body.run_id, bound))!.agent).toMatchObject({ version: 2, instructions: 'Changed.', tools: [], max_iterations: 1 });
  });
});

describe('DELETE', () => {
  it('→ 204; then 404 for every verb and for every new run naming it; runs and conversations keep it; admins see it deleted', async () => {
    const { token, user } = await app.signedInUser();
    const api = as(token);
    const agent = await newAgent(api);
    const other = await newAgent(api, { name: 'survivor' });
    const started = await api.post('/api/runs', { mode: 'react', q: 'before', agent_id: agent.id });
    expect(started.status).toBe(202);
    // A conversation bound to the agent, idle.
    const conversation = randomUUID();
    await app.services.knex('conversations').insert({ id: conversation, user_id: user.id, agent_id: agent.id, title: 'bound' });

    expect((await api.delete(`/api/agents/${agent.id}`)).status).toBe(204);
    expect((await api.get(`/api/agents/${agent.id}`)).status).toBe(404);
    expect((await api.patch(`/api/agents/${agent.id}`, { name: 'back' })).status).toBe(404);
    expect((await api.get(`/api/agents/${agent.id}/versions`)).status).toBe(404);
    expect((await api.post(`/api/agents/${agent.id}/versions/1/restore`)).status).toBe(404);
    expect((await api.delete(`/api/agents/${agent.id}`)).status).toBe(404);
    expect((await api.get('/api/agents')).body.items.map((a: { id: string }) => a.id)).toEqual([other.id]);

    for (const mode of ['react', 'dag']) {
      const res = await api.post(`/api/${mode}`, { q: 'x', agent_id: agent.id });
      expect(res.status, mode).toBe(404);
      expect(res.body.error).toBe('not_found');
    }
    expect((await api.post('/api/runs', { mode: 'react', q: 'x', agent_id: agent.id })).status).toBe(404);
    expect((await api.post('/api/runs', { mode: 'react', q: 'x', conversation_id: conversation })).status).toBe(404);
    const completion = await api.post('/v1/chat/completions', { model: `agent:${agent.id}`, messages: [{ role: 'user', content: 'x' }] });
    expect(completion.status).toBe(404);
    expect(completion.body.error.code).toBe('model_not_found');
    expect((await api.get(`/v1/models/agent:${agent.id}`)).status).toBe(404);
    expect((await api.get('/v1/models')).body.data.map((m: { id: string }) => m.id)).toEqual(['agent:default', `agent:${other.id}`]);
    const mcp = new Client({ name: 'agent-versions-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL('/mcp', app.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    try {
      expect((await mcp.listTools()).tools.map((tool) => tool.name)).toEqual(['survivor']);
    } finally {
      await mcp.close();
    }
    // Nothing was stored for the refused runs; what was there stays, naming the agent.
    expect(await app.services.knex('runs').where({ user_id: user.id }).count({ n: '*' })).toEqual([{ n: '1' }]);
    expect((await api.get(`/api/runs/${started.body.run_id}`)).body).toMatchObject({ agent_id: agent.id, agent_version: 1 });
    expect((await api.get(`/api/conversations/${conversation}`)).body.agent_id).toBe(agent.id);
    const admin = as((await app.signedInUser('admin')).token);
    const listed = await admin.get(`/api/admin/runs?user_id=${user.id}`);
    expect(listed.body.items).toEqual([expect.objectContaining({ id: started.body.run_id, agent_id: agent.id, agent_version: 1, agent_deleted: true })]);
  });

  it("switches off the agent's schedules and removes their timers; other schedules keep theirs", async () => {
    const api = as((await app.signedInUser()).token);
    const agent = await newAgent(api);
    const mine = (await api.post('/api/schedules', { q: 'report', every_seconds: 3600, agent_id: agent.id })).body;
    const unrelated = (await api.post('/api/schedules', { q: 'other', every_seconds: 3600 })).body;
    expect(mine.enabled).toBe(true);
    expect(await app.services.scheduleQueue.getJobScheduler(mine.id)).toBeDefined();

    expect((await api.delete(`/api/agents/${agent.id}`)).status).toBe(204);
    expect((await api.get(`/api/schedules/${mine.id}`)).body).toMatchObject({ enabled: false, next_run_at: null, last_skip_reason: 'agent_deleted', agent_id: agent.id });
    expect(await app.services.scheduleQueue.getJobScheduler(mine.id)).toBeUndefined();
    expect((await api.get(`/api/schedules/${unrelated.id}`)).body.enabled).toBe(true);
    expect(await app.services.scheduleQueue.getJobScheduler(unrelated.id)).toBeDefined();
    // It cannot be switched on again, nor a schedule made for the agent.
    expect((await api.patch(`/api/schedules/${mine.id}`, { enabled: true })).status).toBe(404);
    expect((await api.post('/api/schedules', { q: 'again', every_seconds: 3600, agent_id: agent.id })).status).toBe(404);
    await api.delete(`/api/schedules/${unrelated.id}`);
  });
});

describe('migration', () => {
  it('makes every existing agent version 1, kept in agent_versions', async () => {
    const knex = createKnex(database.url, { poolMax: 1 });
    try {
      const name = '20261125_021_agent_versions';
      const { user } = await app.createUser();
      const existing = (await newAgent(as((await app.signedInUser()).token), { instructions: 'kept' })).id;
      await knex.migrate.down({ name });
      const [old] = await knex('agents').insert({ user_id: user.id, name: 'old', instructions: 'from before' }).returning('id');
      await knex.migrate.up({ name });
      for (const id of [old.id, existing]) {
        expect(await knex('agents').where({ id }).first('version', 'deleted_at')).toEqual({ version: 1, deleted_at: null });
        const versions = await knex('agent_versions').where({ agent_id: id }).select('version', 'config');
        expect(versions).toHaveLength(1);
        expect(versions[0].version).toBe(1);
      }
      const [kept] = await knex('agent_versions').where({ agent_id: old.id }).pluck('config');
      expect(kept).toMatchObject({ name: 'old', instructions: 'from before', model: null });
      expect(Object.keys(kept)).not.toContain('user_id');
    } finally {
      await knex.destroy();
    }
  });
});
