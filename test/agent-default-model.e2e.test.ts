import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.js';
import { ofType, stream } from './support/sse.js';
import { TestGateway } from './support/gateway.js';
import { chat } from './support/gateway-frames.js';
import { uniqueId } from './support/app.js';
import { createDatabase } from './support/database.js';
import { createKnex } from '../src/db/knex.js';

/**
 * An agent's model may be null (DESIGN §17, issue 33 item 2): it then follows the deployment's
 * default model when each run starts, so an agent saved before a real model was connected moves to
 * it. Built web and worker processes whose default is a gateway model on a test gateway.
 */
const DEFAULT_MODEL = 'gw-default';
let gateway: TestGateway;
let stack: Stack;
let key: string;

beforeAll(async () => {
  gateway = await TestGateway.start();
  stack = await startStack({ env: { MODEL_PROVIDER: 'gateway', GATEWAY_MODEL: DEFAULT_MODEL, GATEWAY_URL: gateway.url, GATEWAY_API_KEY: 'gw-test-key', GATEWAY_RETRY_BASE_MS: '1' } });
  ({ key } = await stack.user());
});
afterAll(async () => {
  await stack?.stop();
  await gateway?.close();
});

const api = (method: string, path: string, body?: unknown) => stack.api(key, method, path, body);

async function agent(fields: Record<string, unknown> = {}) {
  const res = await api('POST', '/api/agents', { name: `default-${uniqueId()}`, ...fields });
  expect(res.status).toBe(201);
  return res.body as { id: string; model: string | null; version: number };
}

describe('an agent without a model of its own', () => {
  it('is stored with model null whether the field is omitted or null, and reads back so', async () => {
    const omitted = await agent();
    const explicit = await agent({ model: null });
    for (const saved of [omitted, explicit]) {
      expect(saved.model).toBeNull();
      expect((await api('GET', `/api/agents/${saved.id}`)).body.model).toBeNull();
    }
    const listed = (await api('GET', '/api/agents?size=100')).body.items as { id: string; model: string | null }[];
    expect(listed.find((a) => a.id === omitted.id)?.model).toBeNull();
  });

  it('PATCH to a model and back to null: each is a version, the history keeps them', async () => {
    const { id } = await agent();
    const named = await api('PATCH', `/api/agents/${id}`, { model: 'gpt-4.1' });
    expect(named.status).toBe(200);
    expect(named.body).toMatchObject({ model: 'gpt-4.1', version: 2 });
    const cleared = await api('PATCH', `/api/agents/${id}`, { model: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ model: null, version: 3 });
    const versions = await api('GET', `/api/agents/${id}/versions`);
    expect(versions.body.items.map((v: { version: number; model: string | null }) => [v.version, v.model])).toEqual([
      [3, null],
      [2, 'gpt-4.1'],
      [1, null],
    ]);
    const restored = await api('POST', `/api/agents/${id}/versions/2/restore`);
    expect(restored.body).toMatchObject({ model: 'gpt-4.1', version: 4 });
  });

  it('a model that is not a name → 422, not null', async () => {
    for (const model of ['gpt 4', '', 42]) {
      const res = await api('POST', '/api/agents', { name: 'bad', model });
      expect(res.status, JSON.stringify(model)).toBe(422);
      expect(res.body.detail[0].loc).toEqual(['body', 'model']);
    }
  });

  it('GET /api/agent-defaults names the deployment default and that a gateway is configured', async () => {
    const res = await api('GET', '/api/agent-defaults');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ model: DEFAULT_MODEL, gateway: true });
  });

  it('runs on the deployment default, decided when the run starts', async () => {
    const { id } = await agent({ instructions: 'Answer in one word.' });
    gateway.script(DEFAULT_MODEL, { frames: chat.text(['Paris'], { usage: { prompt: 5, completion: 1 } }) });
    const res = await stream(`${stack.url}/api/react`, { token: key, body: { q: 'Capital of France?', agent_id: id } });
    expect(ofType(res.events, 'done')[0]!.data.status).toBe('succeeded');
    expect(ofType(res.events, 'answer')[0]!.data.content).toBe('Paris');
    const sent = gateway.requestsFor(DEFAULT_MODEL).at(-1)!;
    expect(sent.body.messages[0]).toMatchObject({ role: 'system', content: expect.stringContaining('Answer in one word.') });
    // The record stays null: a default connected later is the one its next run uses.
    expect((await api('GET', `/api/agents/${id}`)).body.model).toBeNull();
  });
});

describe('migration 20261127_025_agent_default_model', () => {
  it('makes the column nullable; agents stored with the old default `local` follow the default, others keep their model', async () => {
    const database = await createDatabase({ migrate: true });
    const knex = createKnex(database.url, { poolMax: 1 });
    try {
      const name = '20261127_025_agent_default_model';
      await knex.migrate.down({ name });
      const [user] = await knex('users').insert({ email: `m-${uniqueId()}@example.test`, password_hash: 'x' }).returning('id');
      const [pinned] = await knex('agents').insert({ user_id: user.id, name: 'pinned', instructions: '' }).returning(['id', 'model']);
      const [chosen] = await knex('agents').insert({ user_id: user.id, name: 'chosen', instructions: '', model: 'gpt-4.1' }).returning('id');
      expect(pinned.model).toBe('local');
      await knex.migrate.up({ name });
      expect(await knex('agents').where({ id: pinned.id }).first('model')).toEqual({ model: null });
      expect(await knex('agents').where({ id: chosen.id }).first('model')).toEqual({ model: 'gpt-4.1' });
      const [inserted] = await knex('agents').insert({ user_id: user.id, name: 'new', instructions: '' }).returning(['id', 'model']);
      expect(inserted.model).toBeNull();
      await knex.migrate.down({ name });
      expect(await knex('agents').whereIn('id', [pinned.id, inserted.id]).pluck('model')).toEqual(['local', 'local']);
    } finally {
      await knex.destroy();
      await database.drop();
    }
  });
});
