import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { inject } from 'vitest';
import { startStack, type Stack } from './support/stack.js';
import { stream, type ReceivedEvent } from './support/sse.js';
import { eventually } from './support/eventually.js';
import { redisKeys } from '../src/shared/redis-keys.js';

/**
 * DESIGN §21: a stream never runs ahead of the record. An event that announces a state (`status:
 * waiting`, the answer, `done`) is published after the row that records it is committed, so a read
 * of the run right after the event shows that state or a later one.
 */
let stack: Stack;
let key: string;
let userId: string;
let agentId: string;
/** A session of the test's own that holds the advisory lock the trigger below waits on. */
let holder: pg.Client;
const LOCK = 732_021;

beforeAll(async () => {
  stack = await startStack({ workers: 2, env: { LOCAL_MODEL_TOKEN_DELAY_MS: '0', RUNS_PER_USER_LIMIT: '50' } });
  const created = await stack.user();
  key = created.key;
  userId = created.user.id;
  const agent = await stack.api(key, 'POST', '/api/agents', { name: 'careful', tool_approval: ['calculator'] });
  expect(agent.status).toBe(201);
  agentId = agent.body.id;
  holder = new pg.Client({ connectionString: inject('databaseUrl') });
  await holder.connect();
  // Only this user's runs: writing `waiting` to the row waits for the lock the test may hold.
  await holder.query(`create or replace function test_hold_parking() returns trigger language plpgsql as $$
    begin perform pg_advisory_xact_lock(${LOCK}); return new; end $$`);
  await holder.query(`create trigger test_hold_parking before update on runs for each row
    when (new.status = 'waiting' and old.status <> 'waiting' and new.user_id = '${userId}') execute function test_hold_parking()`);
});

afterAll(async () => {
  await holder?.query('drop trigger if exists test_hold_parking on runs').catch(() => {});
  await holder?.end();
  await stack?.stop();
});

const start = () => stack.api(key, 'POST', '/api/runs', { mode: 'react', q: 'What is 6*7?', agent_id: agentId });

/** Follows a run's events; resolves once `status: waiting` arrived, after reading the run's record at that instant. */
function readAtWaiting(runId: string): { recorded: Promise<string>; abort: () => void } {
  const controller = new AbortController();
  let resolve!: (status: string) => void;
  const recorded = new Promise<string>((r) => (resolve = r));
  const onEvent = (event: ReceivedEvent) => {
    if (event.type === 'status' && event.data.status === 'waiting') {
      stack.api(key, 'GET', `/api/runs/${runId}`).then((res) => resolve(res.body.status), (err) => resolve(String(err)));
    }
  };
  stream(`${stack.url}/api/runs/${runId}/events`, { method: 'GET', token: key, onEvent, signal: controller.signal }).catch(() => {});
  return { recorded, abort: () => controller.abort() };
}

describe('a stream never runs ahead of the record (DESIGN §21)', () => {
  it('status: waiting is not in the stream while the row that parks the run is not committed', async () => {
    await holder.query('select pg_advisory_lock($1)', [LOCK]);
    let released = false;
    try {
      const runs = await Promise.all(Array.from({ length: 4 }, start));
      const ids = runs.map((r) => r.body.run_id as string);
      const readers = ids.map(readAtWaiting);
      // Every run's park is blocked in Postgres on the held lock (only the trigger on writing `waiting` takes it).
      await eventually(async () => {
        const { rows } = await holder.query(`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and wait_event = 'advisory' and query ilike '%update runs set status = %'`);
        return rows[0].n === ids.length;
      }, 'every run parking, blocked on the held lock');
      const keys = redisKeys({ keyPrefix: stack.env.REDIS_KEY_PREFIX!, clusterNodes: [] });
      for (const id of ids) {
        const entries = (await stack.redis.xrange(keys.runEvents({ id, userId }), '-', '+')) as [string, string[]][];
        const types = entries.map(([, fields]) => `${fields[1]}:${fields[3]}`);
        expect(types.some((t) => t.startsWith('approval_required:'))).toBe(true);
        expect(types.filter((t) => t.includes('"waiting"'))).toEqual([]);
      }
      await holder.query('select pg_advisory_unlock($1)', [LOCK]);
      released = true;
      const statuses = await Promise.all(readers.map((r) => r.recorded));
      expect(statuses).toEqual(ids.map(() => 'waiting'));
      readers.forEach((r) => r.abort());
      await Promise.all(ids.map((id) => stack.api(key, 'POST', `/api/runs/${id}/cancel`)));
    } finally {
      if (!released) await holder.query('select pg_advisory_unlock($1)', [LOCK]);
    }
  });

  it('under load, a read right after each state event shows that state or a later one', async () => {
    const runs = await Promise.all(Array.from({ length: 20 }, start));
    expect(runs.map((r) => `${r.status} ${r.status === 202 ? '' : JSON.stringify(r.body)}`)).toEqual(runs.map(() => '202 '));
    const ids = runs.map((r) => r.body.run_id as string);
    const readers = ids.map(readAtWaiting);
    expect(await Promise.all(readers.map((r) => r.recorded))).toEqual(ids.map(() => 'waiting'));
    readers.forEach((r) => r.abort());
    // The end: `done` is published after the final row, so the read that follows it shows the run final.
    const ends = await Promise.all(
      ids.map(async (id) => {
        let after = '';
        const cancel = await stack.api(key, 'POST', `/api/runs/${id}/cancel`);
        expect(cancel.status).toBe(202);
        await stream(`${stack.url}/api/runs/${id}/events`, {
          method: 'GET',
          token: key,
          onEvent: (event) => {
            if (event.type === 'done') after = 'pending';
          },
        });
        if (after === 'pending') after = (await stack.api(key, 'GET', `/api/runs/${id}`)).body.status;
        return after;
      }),
    );
    expect(ends).toEqual(ids.map(() => 'cancelled'));
  });
});
