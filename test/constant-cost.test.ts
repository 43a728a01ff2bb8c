import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Knex } from 'knex';
import { createLogger } from '../src/logger.js';
import { createKnex } from '../src/db/knex.js';
import { workerServices } from '../workers/runs/assembly.js';
import { RunExecutor } from '../workers/runs/executor.js';
import { WorkerLifecycle } from '../workers/runs/run-control.js';
import { LocalModel } from '../workers/models/local.js';
import { createDatabase } from './support/database.js';
import { startTestApp, type TestApp } from './support/app.js';
import { stream } from './support/sse.js';
import { record, sequentialScans, type Recorded } from './support/plans.js';
import { ConversationEraser } from '../src/conversations/erase.js';

/**
 * Cost must not grow with data a request does not touch: with every table large, each statement
 * of the run, inject, event and auth paths (web and worker, recorded as they run) is planned
 * without a sequential scan of any table.
 */
const SEEDED = { users: 5_000, conversationsPerUser: 4, messagesPerConversation: 10 };

/** Other users' data: every table the paths touch gets many rows, so the planner's choices are the ones at scale. */
async function seed(knex: Knex) {
  const { users, conversationsPerUser, messagesPerConversation } = SEEDED;
  await knex.raw(
    `insert into users (id, email, password_hash) select gen_random_uuid(), 'seed-' || g || '@example.test', 'x' from generate_series(1, ?) g`,
    [users],
  );
  await knex.raw(`insert into api_keys (user_id, name, key_prefix, key_hash) select id, 'seed', 'svc_seed', md5(id::text) || md5(email) from users`);
  await knex.raw(`insert into refresh_tokens (user_id, family_id, token_hash, expires_at) select id, gen_random_uuid(), md5(email) || md5(id::text), now() + interval '1 day' from users`);
  await knex.raw(`insert into agents (user_id, name) select id, 'seed agent' from users`);
  // A run reads the version of its agent it started with (DESIGN §20): every agent has versions.
  await knex.raw(`insert into agent_versions (agent_id, version, config) select a.id, g, jsonb_build_object('name', a.name) from agents a cross join generate_series(1, 3) g`);
  await knex.raw(`insert into webhook_endpoints (user_id, url, events, secret_sealed) select id, 'https://hooks.example.test/seed', '["run.succeeded"]', 'sealed' from users`);
  // A run's final statement looks up its model's price (DESIGN §18).
  await knex.raw(`insert into model_prices (model, input_per_million, output_per_million) select 'seed-model-' || g, 1, 2 from generate_series(1, ?) g`, [users]);
  await knex.raw(
    `insert into conversations (id, user_id, title) select gen_random_uuid(), u.id, 'seed' from users u cross join generate_series(1, ?)`,
    [conversationsPerUser],
  );
  await knex.raw(
    `insert into runs (id, user_id, conversation_id, mode, status, query, answer) select gen_random_uuid(), user_id, id, 'react', 'succeeded', 'q', 'a' from conversations`,
  );
  await knex.raw(
    `insert into messages (id, conversation_id, run_id, role, content)
     select gen_random_uuid(), r.conversation_id, r.id, case when g % 2 = 1 then 'user' else 'assistant' end, 'seeded ' || g
     from runs r cross join generate_series(1, ?) g`,
    [messagesPerConversation],
  );
  // Deleting a conversation scrubs its runs' webhook deliveries (DESIGN §20).
  await knex.raw(
    `insert into webhook_deliveries (id, endpoint_id, run_id, event, payload, status)
     select gen_random_uuid(), e.id, r.id, 'run.succeeded', jsonb_build_object('type', 'run.succeeded', 'data', jsonb_build_object('answer', 'a')), 'delivered'
     from runs r join webhook_endpoints e on e.user_id = r.user_id`,
  );
  await knex.raw('analyze');
}

let database: Awaited<ReturnType<typeof createDatabase>>;
let app: TestApp;
const recorded: Recorded[] = [];

beforeAll(async () => {
  database = await createDatabase();
  const seeding = createKnex(database.url, { poolMax: 1 });
  await seed(seeding).finally(() => seeding.destroy());
  app = await startTestApp({ env: { DATABASE_URL: database.url } });
}, 120_000);

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

describe('constant cost as data grows', () => {
  it('plans every statement of the auth, run, inject and event paths without a sequential scan', async () => {
    const { knex } = app.services;
    const { user, email, password } = await app.createUser();
    const { key } = await app.services.apiKeys.create(user.id, { name: 'cost' });
    const agent = await app.request('POST', '/api/agents', { token: (await app.login(email, password)).access_token, body: { name: 'cost agent' } });
    expect(agent.status).toBe(201);
    record(knex, recorded);

    // Auth: login, refresh, a key and a JWT each verified cold.
    const session = await app.login(email, password);
    expect((await app.request('POST', '/api/auth/refresh', { body: { refresh_token: session.refresh_token } })).status).toBe(200);
    expect((await app.request('GET', '/api/auth/verify', { token: key })).status).toBe(200);
    expect((await app.request('GET', '/api/auth/verify', { token: session.access_token })).status).toBe(200);

    // A run: started through HTTP (queued: no worker runs here), injected into, then executed in-process.
    const worker = testWorker();
    let runId = '';
    let conversationId = '';
    const started = stream(`${app.url}/api/react`, {
      token: key,
      body: { q: 'What is 6*7?', agent_id: agent.body.id },
      onEvent: (event) => {
        if (event.type !== 'run') return;
        runId = event.data.run_id;
        conversationId = event.data.conversation_id;
        void app
          .request('POST', '/api/chat/inject', { token: key, body: { conversation_id: conversationId, content: 'and hello' } })
          .then((res) => expect(res.status).toBe(200))
          .then(() => worker.execute(runId, conversationId, user.id));
      },
    });
    const result = await started;
    expect(result.events.at(-1)).toMatchObject({ type: 'done', data: { status: 'succeeded' } });

    // Following it afterwards, and a second turn on the same conversation.
    expect((await app.request('GET', `/api/runs/${runId}`, { token: key })).status).toBe(200);
    expect((await stream(`${app.url}/api/runs/${runId}/events`, { method: 'GET', token: key })).events.at(-1)?.type).toBe('done');
    expect((await app.request('POST', `/api/runs/${runId}/cancel`, { token: key })).status).toBe(409);
    expect((await app.request('GET', `/api/conversations/${conversationId}`, { token: session.access_token })).status).toBe(200);

    // Conversations (DESIGN §20): a page of messages, the list's filters, PATCH, DELETE, and the retention job's statements.
    const jwt = { token: session.access_token };
    const page = await app.request('GET', `/api/conversations/${conversationId}/messages?limit=2`, jwt);
    expect(page.status).toBe(200);
    expect((await app.request('GET', `/api/conversations/${conversationId}/messages?limit=2&before=${page.body.next_before}`, jwt)).status).toBe(200);
    expect((await app.request('PATCH', `/api/conversations/${conversationId}`, { ...jwt, body: { title: 'cost', metadata: { project: 'cost' } } })).status).toBe(200);
    expect((await app.request('GET', `/api/conversations?agent_id=${agent.body.id}&metadata[project]=cost`, jwt)).body.total).toBe(1);
    expect((await app.request('DELETE', `/api/conversations/${conversationId}`, jwt)).status).toBe(204);
    await new ConversationEraser(knex, app.services.engine, app.services.audit).expireIdle(1);

    const statements = new Map(recorded.filter((q) => !/^(begin|commit|rollback|select 1)/i.test(q.sql.trim())).map((q) => [q.sql, q]));
    expect(statements.size).toBeGreaterThan(10);
    const scanned = await sequentialScans(knex, statements.values());
    expect(scanned).toEqual([]);
  }, 60_000);
});

/** The worker's executor in this process, on the app's (recorded) connection pool. */
function testWorker() {
  const { knex, models, redis, config } = app.services;
  const worker = workerServices(config, { knex, models, redis, logger: createLogger('silent', 'test-worker') });
  const executor = new RunExecutor({ ...worker.deps, modelFor: () => new LocalModel(0) });
  const lifecycle = new WorkerLifecycle();
  return {
    async execute(runId: string, conversationId: string, userId: string) {
      const cancel = new AbortController();
      await executor.execute({ runId, conversationId, userId, attempt: 1, crashes: 0 }, cancel, lifecycle.controlFor(cancel));
      await worker.close();
    },
  };
}
