import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { benchEnvironment, spawnProcess, stop } from './support.js';

/**
 * Requests/s and p99 for GET /healthz and GET /api/auth/verify (JWT and API key), same load
 * generator, same run, against a separate web process. Target: API-key verify ≥ 80% of healthz.
 */
const PORT = 3917;
const DURATION_S = 8;
const CONNECTIONS = 64;

async function load(path: string, token?: string) {
  const result = await autocannon({
    url: `http://127.0.0.1:${PORT}${path}`,
    connections: CONNECTIONS,
    duration: DURATION_S,
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${path}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 };
}

export async function run() {
  const bench = await benchEnvironment('auth');
  const { user, key } = await bench.user('bench@example.test');
  const { token: jwt } = await bench.identity.jwt.sign(user.id, randomUUID());
  const web = await spawnProcess('../src/server.js', { ...bench.env, PORT: String(PORT) }, /web listening/);
  try {
    await load('/healthz'); // warm-up (JIT, connection pool, key cache)
    await load('/api/auth/verify', key);
    const rows = {
      'GET /healthz': await load('/healthz'),
      'GET /api/auth/verify (JWT)': await load('/api/auth/verify', jwt),
      'GET /api/auth/verify (API key)': await load('/api/auth/verify', key),
    };
    const baseline = rows['GET /healthz'].rps;
    console.log(`\nauth benchmark: ${CONNECTIONS} connections, ${DURATION_S} s each, one web process (autocannon)\n`);
    console.table(
      Object.fromEntries(
        Object.entries(rows).map(([name, r]) => [
          name,
          { 'req/s': Math.round(r.rps), 'p50 ms': r.p50, 'p99 ms': r.p99, 'vs healthz': `${((r.rps / baseline) * 100).toFixed(1)}%` },
        ]),
      ),
    );
    const ratio = rows['GET /api/auth/verify (API key)'].rps / baseline;
    console.log(`API-key verify / healthz = ${(ratio * 100).toFixed(1)}% (target ≥ 80%)`);
  } finally {
    await stop(web);
    await bench.drop();
  }
}
