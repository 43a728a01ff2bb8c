import autocannon from 'autocannon';
import { benchEnvironment, round, spawnProcess, stop } from './support.js';

/**
 * Administration at scale (DESIGN §9):
 * 1. GET /api/admin/usage and GET /api/admin/runs over 100,000 runs (200 users, 30 days): p50/p99.
 *    Target: p50 ≤ 50 ms.
 * 2. GET /api/auth/verify throughput while another web process serves logins, each writing an audit
 *    entry, against the same with the audit log's inserts switched off (a rule on the benchmark's own
 *    database, so both phases do identical work but the audit writes). Target: ratio ≥ 0.9.
 */
const ADMIN_PORT = 3922;
const LOGIN_PORT = 3923;
const RUNS = 100_000;
const USERS = 200;
const LATENCY_S = 6;
const VERIFY_S = 8;

const SEED = `
insert into users (id, email, name, role, password_hash)
  select gen_random_uuid(), 'u' || g || '@bench.test', 'u' || g, 'member', 'x' from generate_series(1, ${USERS}) g;
insert into conversations (id, user_id, title)
  select gen_random_uuid(), u.id, 'c' from users u, generate_series(1, 5) where u.email like '%@bench.test';
with c as (select id, user_id, row_number() over () as n from conversations), total as (select count(*) as n from c)
insert into runs (id, user_id, conversation_id, mode, status, query, answer, usage, created_at, started_at, finished_at)
select gen_random_uuid(), c.user_id, c.id,
       case when g % 3 = 0 then 'dag' else 'react' end,
       (array['succeeded', 'succeeded', 'succeeded', 'failed', 'cancelled'])[1 + g % 5],
       'question ' || g, 'answer ' || g,
       jsonb_build_object('prompt_tokens', 100 + g % 50, 'completion_tokens', 20 + g % 30, 'reasoning_tokens', g % 7, 'total_tokens', 120 + g % 80),
       now() - g * interval '25 seconds', now() - g * interval '25 seconds', now() - g * interval '25 seconds' + interval '3 seconds'
from generate_series(1, ${RUNS}) g join c on c.n = 1 + g % (select n from total)`;

async function latency(path: string, key: string) {
  const result = await autocannon({ url: `http://127.0.0.1:${ADMIN_PORT}${path}`, connections: 4, duration: LATENCY_S, headers: { authorization: `Bearer ${key}` } });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${path}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { 'req/s': Math.round(result.requests.average), 'p50 ms': result.latency.p50, 'p99 ms': result.latency.p99 };
}

/** Verify throughput on one web process while the other serves a steady stream of logins. */
async function verifyDuringLogins(key: string, email: string) {
  const logins = autocannon({
    url: `http://127.0.0.1:${LOGIN_PORT}/api/auth/login`,
    method: 'POST',
    connections: 2,
    overallRate: 10,
    duration: VERIFY_S,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'bench-password' }),
  });
  const verify = await autocannon({ url: `http://127.0.0.1:${ADMIN_PORT}/api/auth/verify`, connections: 32, duration: VERIFY_S, headers: { authorization: `Bearer ${key}` } });
  const login = await logins;
  if (verify.non2xx > 0 || login.non2xx > 0) throw new Error(`non-2xx: verify ${verify.non2xx}, login ${login.non2xx}`);
  return { verifyRps: verify.requests.average, logins: login.requests.total };
}

export async function run() {
  const bench = await benchEnvironment('admin');
  const { knex } = bench;
  console.log(`seeding ${RUNS} runs over 30 days for ${USERS} users…`);
  await knex.raw(SEED);
  await knex.raw('vacuum analyze runs, usage_daily, users, conversations');
  const { user: admin } = await bench.user('admin@bench.example');
  await knex('users').where({ id: admin.id }).update({ role: 'admin' });
  const { key } = await bench.identity.apiKeys.create(admin.id, { name: 'ops', scopes: 'admin' });
  const { user: member, key: memberKey } = await bench.user('member@bench.example');

  const env = { ...bench.env, WEB_DATABASE_POOL_MAX: '10' };
  const web = await spawnProcess('../src/server.js', { ...env, PORT: String(ADMIN_PORT) }, /web listening/);
  const loginWeb = await spawnProcess('../src/server.js', { ...env, PORT: String(LOGIN_PORT) }, /web listening/);
  try {
    await latency('/api/admin/usage', key); // warm-up (JIT, pools, caches)
    const someUser = (await knex('users').where('email', 'like', '%@bench.test').first()).id;
    const rows = {
      'GET /api/admin/usage (30 days, by user)': await latency('/api/admin/usage', key),
      'GET /api/admin/usage?group_by=day': await latency('/api/admin/usage?group_by=day', key),
      'GET /api/admin/usage?user_id=…': await latency(`/api/admin/usage?user_id=${someUser}`, key),
      'GET /api/admin/runs': await latency('/api/admin/runs', key),
      'GET /api/admin/runs?status=failed&mode=dag': await latency('/api/admin/runs?status=failed&mode=dag', key),
      'GET /api/admin/runs?user_id=…&page=3': await latency(`/api/admin/runs?user_id=${someUser}&page=3`, key),
    };
    console.log(`\nadmin benchmark: ${RUNS} runs, ${USERS} users; 4 connections, ${LATENCY_S} s each (autocannon)\n`);
    console.table(rows);

    await verifyDuringLogins(memberKey, member.email); // warm-up
    await knex.raw('create rule audit_log_bench_off as on insert to audit_log do instead nothing');
    const without = await verifyDuringLogins(memberKey, member.email);
    await knex.raw('drop rule audit_log_bench_off on audit_log');
    const before = Number((await knex('audit_log').count({ n: '*' }))[0]!.n);
    const withAudit = await verifyDuringLogins(memberKey, member.email);
    const written = Number((await knex('audit_log').count({ n: '*' }))[0]!.n) - before;
    console.log(`\nGET /api/auth/verify (API key, 32 connections, ${VERIFY_S} s) while web ${LOGIN_PORT} serves ~10 logins/s:`);
    console.table({
      'audit writes off': { 'verify req/s': Math.round(without.verifyRps), logins: without.logins, 'audit rows': 0 },
      'audit writes on': { 'verify req/s': Math.round(withAudit.verifyRps), logins: withAudit.logins, 'audit rows': written },
    });
    console.log(`verify with audit / without = ${round(withAudit.verifyRps / without.verifyRps, 3)} (target ≥ 0.9)`);
  } finally {
    await Promise.all([stop(web), stop(loginWeb)]);
    await bench.drop();
  }
}
