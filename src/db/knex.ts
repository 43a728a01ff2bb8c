import knexFactory, { type Knex } from 'knex';
import { migrationSource } from '../../migrations/index.js';

export interface PoolOptions {
  poolMax?: number;
  /** Bounds connecting, so an unreachable Postgres fails fast (the failure reaches the waiting caller at once). */
  connectTimeoutMs?: number;
  /**
   * Bounds waiting for a pooled connection. Longer than connecting, so a timeout here means every
   * connection was busy (saturation → 429), never that Postgres could not be reached (→ 503).
   */
  acquireTimeoutMs?: number;
  /** Bounds each query on the client side, so a Postgres that stops answering cannot hang a caller. */
  queryTimeoutMs?: number;
}

export function knexConfig(databaseUrl: string, { poolMax = 10, connectTimeoutMs = 2000, acquireTimeoutMs, queryTimeoutMs }: PoolOptions = {}): Knex.Config {
  return {
    client: 'pg',
    // pg reads sslmode from the URL (Heroku: ?sslmode=no-verify).
    connection: { connectionString: databaseUrl, connectionTimeoutMillis: connectTimeoutMs, query_timeout: queryTimeoutMs },
    pool: { min: 0, max: poolMax },
    acquireConnectionTimeout: acquireTimeoutMs ?? connectTimeoutMs * 2,
    migrations: { migrationSource, tableName: 'knex_migrations' },
    // knex prints every failed pool acquire with a stack trace; the caller's error (a 429 or 503 logged with its
    // cause on the web, a hand-back on a worker) already says it once, so under overload that is only noise.
    log: { warn: (message: string) => (String(message).startsWith('Acquire connection error') ? undefined : console.warn(message)) },
  };
}

export function createKnex(databaseUrl: string, options?: PoolOptions): Knex {
  return knexFactory(knexConfig(databaseUrl, options));
}

/**
 * The web tier answers 503 within 2 s when Postgres is unreachable or stops answering, and 429
 * after at most 2 s waiting for a connection when every one is busy. Size: WEB_DATABASE_POOL_MAX.
 */
export const WEB_POOL: PoolOptions = { connectTimeoutMs: 1000, acquireTimeoutMs: 2000, queryTimeoutMs: 1500 };
/** Workers wait longer (a run survives a short blip or a busy pool) but never forever. Size: WORKER_DATABASE_POOL_MAX. */
export const WORKER_POOL: PoolOptions = { connectTimeoutMs: 2000, acquireTimeoutMs: 10_000, queryTimeoutMs: 30_000 };

export async function migrateLatest(knex: Knex): Promise<string[]> {
  const [, applied] = (await knex.migrate.latest()) as [number, string[]];
  return applied;
}
