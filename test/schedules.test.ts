import { randomUUID } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { createDatabase } from './support/database.js';
import { createLogger } from '../src/logger.js';
import { createRedis } from '../src/redis/connection.js';
import { nextCronAt, shortestCronGapSeconds } from '../src/schedules/timing.js';
import { startScheduleWorker, type RunningScheduleWorker } from '../workers/schedules.js';

/**
 * Schedules (DESIGN §19) on a database of their own (a worker's start reconciles every enabled
 * schedule it finds, so no other test's may be there): CRUD, hostile input, the per-user bound
 * (also raced), ownership, ticks that must start nothing (agent deleted, owner disabled) with a
 * schedule worker in this process, and next_run_at across Berlin's DST changes.
 */
const PER_USER = 3;
const MIN_INTERVAL_S = 2;

let database: Awaited<ReturnType<typeof createDatabase>>;
let app: TestApp;
let worker: RunningScheduleWorker;
let workerRedis: ReturnType<typeof createRedis>;
/** The schedule worker's log lines, parsed, as they arrive. */
const ticks: Record<string, unknown>[] = [];
const tickArrivals = new EventEmitter();

beforeAll(async () => {
  database = await createDatabase();
  app = await startTestApp({ env: { DATABASE_URL: database.url, SCHEDULES_PER_USER: String(PER_USER), SCHEDULE_MIN_INTERVAL_S: String(MIN_INTERVAL_S) } });
  const { config, knex, models, engine } = app.services;
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        ticks.push(JSON.parse(line));
        tickArrivals.emit('tick');
      }
      done();
    },
  });
  workerRedis = createRedis(config.redis, 'worker-commands', 'test-schedule-worker');
  // In process, the worker's ticks start runs through the app's run engine.
  worker = await startScheduleWorker(config, { knex, models, redis: workerRedis, engine, logger: createLogger('debug', 'worker', sink) });
});
afterAll(async () => {
  await worker?.close();
  workerRedis?.disconnect();
  await app?.close();
  await database?.drop();
});

const as = (token: string) => ({
  get: (path: string) => app.request('GET', path, { token }),
  post: (path: string, body?: unknown) => app.request('POST', path, { token, body }),
  patch: (path: string, body: unknown) => app.request('PATCH', path, { token, body }),
  delete: (path: string) => app.request('DELETE', path, { token }),
});

/** Resolves with the schedule worker's first log line about `scheduleId` that `matches`. */
async function tickOf(scheduleId: string, matches: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
  for (;;) {
    const found = ticks.find((line) => line.schedule_id === scheduleId && matches(line));
    if (found) return found;
    await once(tickArrivals, 'tick');
  }
}

const runsOf = async (scheduleId: string) => Number((await app.services.knex('runs').where({ schedule_id: scheduleId }).count({ n: '*' }))[0]!.n);

describe('CRUD', () => {
  it('creates, reads, lists, changes, switches off and on, and deletes a schedule with its timer', async () => {
    const api = as((await app.signedInUser()).token);
    const created = await api.post('/api/schedules', { q: 'Morning report', cron: '0 9 * * 1-5', timezone: 'europe/berlin' });
    expect(created.status).toBe(201);
    const id = created.body.id;
    expect(created.body).toEqual({
      id: expect.any(String),
      name: 'Morning report',
      agent_id: null,
      mode: 'react',
      q: 'Morning report',
      cron: '0 9 * * 1-5',
      every_seconds: null,
      timezone: 'Europe/Berlin',
      conversation_id: null,
      enabled: true,
      next_run_at: expect.any(String),
      last_run_at: null,
      last_run_id: null,
      skipped_runs: 0,
      last_skip_reason: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    // The instant BullMQ's timer holds, and the one its rule computes from now.
    const next = await app.services.scheduleQueue.getJobScheduler(id);
    expect(created.body.next_run_at).toBe(new Date(next!.next!).toISOString());
    expect(created.body.next_run_at).toBe(nextCronAt('0 9 * * 1-5', 'Europe/Berlin', new Date())!.toISOString());

    expect((await api.get(`/api/schedules/${id}`)).body).toEqual(created.body);
    await api.post('/api/schedules', { q: 'Hourly check', name: 'hourly', every_seconds: 3600, mode: 'dag', user_metadata: 'ops' });
    const listed = await api.get('/api/schedules?size=1');
    expect(listed.body).toMatchObject({ total: 2, page: 1, size: 1, pages: 2 });
    expect(listed.body.items[0]).toMatchObject({ name: 'hourly', mode: 'dag', every_seconds: 3600, cron: null });

    const every = await api.patch(`/api/schedules/${id}`, { every_seconds: 600, name: 'Every ten minutes' });
    expect(every.status).toBe(200);
    expect(every.body).toMatchObject({ cron: null, every_seconds: 600, name: 'Every ten minutes', timezone: 'Europe/Berlin' });
    // every_seconds starts one interval after it is set.
    const planned = Date.parse(every.body.next_run_at) - Date.now();
    expect(planned).toBeGreaterThan(590_000);
    expect(planned).toBeLessThanOrEqual(600_000);

    const off = await api.patch(`/api/schedules/${id}`, { enabled: false });
    expect(off.body).toMatchObject({ enabled: false, next_run_at: null });
    expect(await app.services.scheduleQueue.getJobScheduler(id)).toBeUndefined();
    const on = await api.patch(`/api/schedules/${id}`, { enabled: true });
    expect(on.body.enabled).toBe(true);
    expect(on.body.next_run_at).toBe(new Date((await app.services.scheduleQueue.getJobScheduler(id))!.next!).toISOString());

    expect((await api.delete(`/api/schedules/${id}`)).status).toBe(204);
    expect((await api.get(`/api/schedules/${id}`)).status).toBe(404);
    expect(await app.services.scheduleQueue.getJobScheduler(id)).toBeUndefined();
    expect((await api.get('/api/schedules')).body.total).toBe(1);
  });

  it('a schedule created disabled has no timer; a run now (trigger) is 202 and is listed with the schedule', async () => {
    const api = as((await app.signedInUser()).token);
    const created = await api.post('/api/schedules', { q: 'What is 2+2?', every_seconds: 60, enabled: false });
    expect(created.body).toMatchObject({ enabled: false, next_run_at: null });
    expect(await app.services.scheduleQueue.getJobScheduler(created.body.id)).toBeUndefined();
    const triggered = await api.post(`/api/schedules/${created.body.id}/trigger`);
    expect(triggered.status).toBe(202);
    expect(triggered.headers.get('location')).toBe(`/api/runs/${triggered.body.run_id}`);
    const runs = await api.get(`/api/schedules/${created.body.id}/runs`);
    expect(runs.body).toMatchObject({ total: 1, items: [{ id: triggered.body.run_id, schedule_id: created.body.id, query: 'What is 2+2?' }] });
    expect((await api.get(`/api/schedules/${created.body.id}`)).body).toMatchObject({ last_run_id: triggered.body.run_id, last_run_at: expect.any(String) });
  });
});

describe('hostile input: each bad field → 422 naming it', () => {
  const valid = { q: 'x', every_seconds: 60 };
  let token: string;
  beforeAll(async () => {
    ({ token } = await app.signedInUser());
  });
  it.each([
    ['a cron that is not one', { q: 'x', cron: 'every morning' }, ['cron']],
    ['a 7-field cron', { q: 'x', cron: '0 0 9 * * * 2030' }, ['cron']],
    ['a 4-field cron', { q: 'x', cron: '0 9 * *' }, ['cron']],
    ['a cron value out of range', { q: 'x', cron: '61 * * * *' }, ['cron']],
    ['a cron that never fires', { q: 'x', cron: '0 0 30 2 *' }, ['cron']],
    ['a cron macro', { q: 'x', cron: '@daily' }, ['cron']],
    ['an unknown time zone', { ...valid, timezone: 'Mars/Olympus_Mons' }, ['timezone']],
    ['an offset for a time zone', { ...valid, timezone: '+02:00' }, ['timezone']],
    ['both cron and every_seconds', { q: 'x', cron: '0 9 * * *', every_seconds: 60 }, ['cron', 'every_seconds']],
    ['neither cron nor every_seconds', { q: 'x' }, ['cron', 'every_seconds']],
    ['every_seconds under the minimum', { q: 'x', every_seconds: MIN_INTERVAL_S - 1 }, ['every_seconds']],
    ['a cron more frequent than the minimum', { q: 'x', cron: '* * * * * *' }, ['cron']],
    ['a cron whose gaps are sometimes under the minimum', { q: 'x', cron: '0,1 * * * * *' }, ['cron']],
    ['a fractional every_seconds', { q: 'x', every_seconds: 60.5 }, ['every_seconds']],
    ['every_seconds past a year', { q: 'x', every_seconds: 366 * 24 * 3600 }, ['every_seconds']],
    ['an empty q', { q: '  ', every_seconds: 60 }, ['q']],
    ['a q past 32,000 characters', { q: 'x'.repeat(32_001), every_seconds: 60 }, ['q']],
    ['a name past 200 characters', { ...valid, name: 'n'.repeat(201) }, ['name']],
    ['an unknown mode', { ...valid, mode: 'plan' }, ['mode']],
    ['user_metadata past 16 KB', { ...valid, user_metadata: 'm'.repeat(16_385) }, ['user_metadata']],
    ['an agent id that is not a UUID', { ...valid, agent_id: 'agent-1' }, ['agent_id']],
    ['a field the API does not have', { ...valid, stream: true }, ['stream']],
  ])('%s', async (_, body, fields) => {
    const res = await as(token).post('/api/schedules', body);
    expect(res.status).toBe(422);
    expect(res.body.detail.map((d: { loc: string[] }) => d.loc.join('.')).sort()).toEqual(fields.map((f) => `body.${f}`).sort());
    expect((await as(token).get('/api/schedules')).body.total).toBe(0);
  });

  it('a seconds cron at the minimum and a 6-field one are taken', async () => {
    const api = as((await app.signedInUser()).token);
    expect((await api.post('/api/schedules', { q: 'x', cron: `*/${MIN_INTERVAL_S} * * * * *`, enabled: false })).status).toBe(201);
    expect((await api.post('/api/schedules', { q: 'x', cron: '30 0 9 * * MON', enabled: false })).status).toBe(201);
  });

  it('PATCH checks the timing it leaves: no field, no timing, too frequent, unknown zone', async () => {
    const api = as((await app.signedInUser()).token);
    const { id } = (await api.post('/api/schedules', { q: 'x', cron: '0 9 * * *', enabled: false })).body;
    const cases: [unknown, string[]][] = [
      [{}, ['body']],
      [{ cron: null }, ['body.cron', 'body.every_seconds']],
      [{ cron: '* * * * * *' }, ['body.cron']],
      [{ cron: '0 9 * * *', every_seconds: 60 }, ['body.cron', 'body.every_seconds']],
      [{ timezone: 'Nowhere/Atall' }, ['body.timezone']],
      [{ every_seconds: 0 }, ['body.every_seconds']],
    ];
    for (const [body, locs] of cases) {
      const res = await api.patch(`/api/schedules/${id}`, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.detail.map((d: { loc: string[] }) => d.loc.join('.')).sort()).toEqual(locs.sort());
    }
    expect((await api.get(`/api/schedules/${id}`)).body).toMatchObject({ cron: '0 9 * * *', every_seconds: null, timezone: 'UTC' });
  });
});

describe('bounds and ownership', () => {
  it(`the schedule past SCHEDULES_PER_USER (${PER_USER}) is refused with 409, also when creates race at the limit`, async () => {
    const api = as((await app.signedInUser()).token);
    for (let i = 0; i < PER_USER; i++) expect((await api.post('/api/schedules', { q: `n${i}`, every_seconds: 60, enabled: false })).status).toBe(201);
    const over = await api.post('/api/schedules', { q: 'one more', every_seconds: 60, enabled: false });
    expect(over.status).toBe(409);
    expect(over.body.error).toBe('schedule_limit');

    const racer = as((await app.signedInUser()).token);
    const raced = await Promise.all(Array.from({ length: PER_USER * 3 }, (_, i) => racer.post('/api/schedules', { q: `race ${i}`, every_seconds: 60, enabled: false })));
    expect(raced.filter((r) => r.status === 201)).toHaveLength(PER_USER);
    expect(raced.filter((r) => r.status === 409)).toHaveLength(PER_USER * 2);
    expect((await racer.get('/api/schedules')).body.total).toBe(PER_USER);
  });

  it('scope chat: a chat key may, a kb key may not; restricted users may read and trigger, not create or change', async () => {
    const { token } = await app.signedInUser();
    const keyWith = async (scopes: string) => (await app.request('POST', '/api/me/api-keys', { token, body: { name: scopes, scopes } })).body.key as string;
    const created = await as(await keyWith('chat')).post('/api/schedules', { q: 'x', every_seconds: 60, enabled: false });
    expect(created.status).toBe(201);
    const kb = as(await keyWith('kb'));
    expect((await kb.get('/api/schedules')).status).toBe(403);
    expect((await kb.post(`/api/schedules/${created.body.id}/trigger`)).status).toBe(403);
    const restricted = as((await app.signedInUser('restricted')).token);
    expect((await restricted.get('/api/schedules')).status).toBe(200);
    expect((await restricted.post('/api/schedules', { q: 'x', every_seconds: 60 })).status).toBe(403);
  });

  it("another user's schedule is 404 on every verb, and changes nothing", async () => {
    const owner = as((await app.signedInUser()).token);
    const { id } = (await owner.post('/api/schedules', { q: 'mine', every_seconds: 60, enabled: false })).body;
    const other = as((await app.signedInUser()).token);
    const answers = await Promise.all([
      other.get(`/api/schedules/${id}`),
      other.patch(`/api/schedules/${id}`, { name: 'theirs' }),
      other.delete(`/api/schedules/${id}`),
      other.get(`/api/schedules/${id}/runs`),
      other.post(`/api/schedules/${id}/trigger`),
    ]);
    expect(answers.map((a) => a.status)).toEqual([404, 404, 404, 404, 404]);
    expect((await owner.get(`/api/schedules/${id}`)).body.name).toBe('mine');
    expect((await owner.get(`/api/schedules/${randomUUID()}`)).status).toBe(404);
  });

  it("another user's (or an unknown) agent or conversation answers as /api/react does", async () => {
    const stranger = await app.signedInUser();
    const agent = await app.request('POST', '/api/agents', { token: stranger.token, body: { name: 'theirs' } });
    const { user: strangerUser } = stranger;
    const conversation = randomUUID();
    await app.services.knex('conversations').insert({ id: conversation, user_id: strangerUser.id, title: 'theirs' });
    const { token } = await app.signedInUser();
    const api = as(token);
    const { id } = (await api.post('/api/schedules', { q: 'x', every_seconds: 60, enabled: false })).body;
    for (const reference of [{ agent_id: agent.body.id }, { conversation_id: conversation }, { agent_id: randomUUID() }, { conversation_id: randomUUID() }]) {
      const react = await app.request('POST', '/api/react', { token, body: { q: 'x', ...reference } });
      const created = await api.post('/api/schedules', { q: 'x', every_seconds: 60, ...reference });
      const patched = await api.patch(`/api/schedules/${id}`, reference);
      expect([created.status, patched.status], JSON.stringify(reference)).toEqual([react.status, react.status]);
      expect(created.body).toEqual(react.body);
    }
    expect((await api.get('/api/schedules')).body.total).toBe(1);
  });
});

describe('ticks that must start nothing', () => {
  it('a schedule whose agent was deleted does not fire: the tick switches it off and removes its timer', async () => {
    const { token } = await app.signedInUser();
    const api = as(token);
    const agent = (await app.request('POST', '/api/agents', { token, body: { name: 'short-lived' } })).body;
    const { id } = (await api.post('/api/schedules', { q: 'x', every_seconds: MIN_INTERVAL_S, agent_id: agent.id })).body;
    await app.services.knex('agents').where({ id: agent.id }).delete();
    await tickOf(id, (line) => line.outcome === 'disabled');
    expect((await api.get(`/api/schedules/${id}`)).body).toMatchObject({ enabled: false, next_run_at: null, last_skip_reason: 'agent_deleted', skipped_runs: 1, agent_id: agent.id });
    expect(await app.services.scheduleQueue.getJobScheduler(id)).toBeUndefined();
    expect(await runsOf(id)).toBe(0);
    // Switching it on again names the missing agent at once.
    expect((await api.patch(`/api/schedules/${id}`, { enabled: true })).status).toBe(404);
  });

  it("a disabled user's schedule does not fire", async () => {
    const admin = await app.signedInUser('admin');
    const member = await app.signedInUser();
    const { id } = (await as(member.token).post('/api/schedules', { q: 'x', every_seconds: MIN_INTERVAL_S })).body;
    expect((await as(admin.token).patch(`/api/admin/users/${member.user.id}`, { is_active: false })).status).toBe(200);
    const first = await tickOf(id, (line) => line.outcome === 'idle' && line.reason === 'owner_disabled');
    await tickOf(id, (line) => line.reason === 'owner_disabled' && line.planned_at !== first.planned_at);
    expect(await runsOf(id)).toBe(0);
    expect(ticks.filter((line) => line.schedule_id === id && line.outcome === 'started')).toEqual([]);
  });
});

describe('next_run_at across DST (Europe/Berlin)', () => {
  const at = (iso: string) => new Date(iso);
  const berlin = (cron: string, from: string) => nextCronAt(cron, 'Europe/Berlin', at(from))!.toISOString();

  it('09:00 local is 08:00 UTC in winter and 07:00 UTC in summer, on both sides of each change', () => {
    expect(berlin('0 9 * * *', '2026-03-28T12:00:00Z')).toBe('2026-03-29T07:00:00.000Z');
    expect(berlin('0 9 * * *', '2026-03-27T12:00:00Z')).toBe('2026-03-28T08:00:00.000Z');
    expect(berlin('0 9 * * *', '2026-10-24T12:00:00Z')).toBe('2026-10-25T08:00:00.000Z');
    expect(berlin('0 9 * * *', '2026-10-23T12:00:00Z')).toBe('2026-10-24T07:00:00.000Z');
  });

  it('the hour that does not exist in March moves on to the next; the hour that happens twice in October fires once', () => {
    expect(berlin('30 2 * * *', '2026-03-28T12:00:00Z')).toBe('2026-03-29T01:30:00.000Z');
    expect(berlin('30 2 * * *', '2026-03-29T12:00:00Z')).toBe('2026-03-30T00:30:00.000Z');
    expect(berlin('30 2 * * *', '2026-10-24T12:00:00Z')).toBe('2026-10-25T00:30:00.000Z');
    expect(berlin('30 2 * * *', '2026-10-25T00:30:00Z')).toBe('2026-10-26T01:30:00.000Z');
  });

  it('an hourly cron is an hour apart in UTC through both changes', () => {
    expect(shortestCronGapSeconds('0 * * * *', 'Europe/Berlin', at('2026-03-29T00:00:00Z'), 60)).toBe(3600);
    expect(shortestCronGapSeconds('0 * * * *', 'Europe/Berlin', at('2026-10-25T00:00:00Z'), 60)).toBe(3600);
  });
});
