import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import type { ChildProcess } from 'node:child_process';
import { cpuSeconds } from './cpu.js';
import { BENCH_ORIGIN, FEATURE_ENVS, FEATURES, featureLabel, ROUND_ORDERS, round, spawnProcess, stop, benchEnvironment, type Features } from './support.js';

/**
 * Requests/s and p99 for GET /healthz and GET /api/auth/verify (JWT and API key), same load
 * generator, same run, against a separate web process. Target: API-key verify ≥ 80% of healthz.
 * Side by side: web processes with metrics and CORS off and on (DESIGN §12), in alternating
 * rounds, a fresh process each round: on a shared machine one process can run a third slower than
 * its identical twin, so no configuration keeps a lucky or unlucky process. Target: on ≥ 0.95 of off.
 */
const PORTS: Record<Features, number> = { off: 3917, on: 3937 };
/** Per round; each endpoint and configuration gets ROUND_ORDERS.length rounds. */
const DURATION_S = 4;
const WARM_UP_S = 2;
const CONNECTIONS = 64;

interface Result {
  rps: number;
  p50: number;
  p99: number;
  /** The web process's own CPU time per request: steadier than req/s on a machine doing other work. */
  cpuUs: number;
}

async function load(web: ChildProcess, features: Features, path: string, token?: string, duration = DURATION_S): Promise<Result> {
  const cpuBefore = cpuSeconds(web.pid!);
  const result = await autocannon({
    url: `http://127.0.0.1:${PORTS[features]}${path}`,
    connections: CONNECTIONS,
    duration,
    headers: { origin: BENCH_ORIGIN, ...(token ? { authorization: `Bearer ${token}` } : {}) },
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${path}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  const cpuUs = ((cpuSeconds(web.pid!) - cpuBefore) / result.requests.total) * 1e6;
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, cpuUs };
}

const mean = (results: Result[], field: keyof Result) => results.reduce((sum, r) => sum + r[field], 0) / results.length;

export async function run() {
  const bench = await benchEnvironment('auth');
  const { user, key } = await bench.user('bench@example.test');
  const { token: jwt } = await bench.identity.jwt.sign(user.id, randomUUID());
  let web: ChildProcess | undefined;
  try {
    const endpoints: [string, string, string | undefined][] = [
      ['GET /healthz', '/healthz', undefined],
      ['GET /api/auth/verify (JWT)', '/api/auth/verify', jwt],
      ['GET /api/auth/verify (API key)', '/api/auth/verify', key],
    ];
    const results = new Map(endpoints.map(([name]) => [name, { off: [] as Result[], on: [] as Result[] }]));
    for (const order of ROUND_ORDERS) {
      for (const features of order) {
        web = await spawnProcess('../src/server.js', { ...bench.env, ...FEATURE_ENVS[features], PORT: String(PORTS[features]) }, /web listening/);
        await load(web, features, '/healthz', undefined, WARM_UP_S); // warm-up (JIT, connection pool, key cache)
        await load(web, features, '/api/auth/verify', key, WARM_UP_S);
        for (const [name, path, token] of endpoints) results.get(name)![features].push(await load(web, features, path, token));
        await stop(web);
      }
    }
    const rps = (name: string, features: Features) => mean(results.get(name)![features], 'rps');
    console.log(`\nauth benchmark: ${CONNECTIONS} connections, ${ROUND_ORDERS.length} rounds of ${DURATION_S} s per endpoint and configuration, alternating, a fresh web process per round and configuration (autocannon)\n`);
    const rows: Record<string, Record<string, number | string>> = {};
    for (const [name] of endpoints) {
      for (const features of FEATURES) {
        const r = results.get(name)![features];
        rows[`${name} [${featureLabel(features)}]`] = {
          'req/s': Math.round(mean(r, 'rps')),
          'p50 ms': round(mean(r, 'p50'), 1),
          'p99 ms': round(mean(r, 'p99'), 1),
          'vs healthz': `${((mean(r, 'rps') / rps('GET /healthz', features)) * 100).toFixed(1)}%`,
          'web CPU µs/req': round(mean(r, 'cpuUs'), 1),
        };
      }
    }
    console.table(rows);
    for (const features of FEATURES) {
      const ratio = rps('GET /api/auth/verify (API key)', features) / rps('GET /healthz', features);
      console.log(`[${featureLabel(features)}] API-key verify / healthz = ${(ratio * 100).toFixed(1)}% (target ≥ 80%)`);
    }
    const cpu = (name: string, features: Features) => mean(results.get(name)![features], 'cpuUs');
    const ratios = endpoints.map(([name]) => `${name} ${round(rps(name, 'on') / rps(name, 'off'), 3)}`);
    console.log(`req/s with metrics+CORS on / off: ${ratios.join('; ')} (target ≥ 0.95)`);
    const cpuRatios = endpoints.map(([name]) => `${name} ${round(cpu(name, 'off') / cpu(name, 'on'), 3)}`);
    console.log(`requests per web CPU second, on / off: ${cpuRatios.join('; ')} (target ≥ 0.95)`);
  } finally {
    if (web) await stop(web);
    await bench.drop();
  }
}
