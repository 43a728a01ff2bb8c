import knexFactory, { type Knex } from 'knex';
import { migrationSource } from '../../migrations/index.js';

export interface PoolOptions {
  poolMax?: number;
  /** Bounds connecting and waiting for a pooled connection, so an unreachable Postgres fails fast. */
  connectTimeoutMs?: number;
  /** Bounds each query on the client side, so a Postgres that stops answering cannot hang a caller. */
  queryTimeoutMs?: number;
}

export function knexConfig(databaseUrl: string, { poolMax = 10, connectTimeoutMs = 2000, queryTimeoutMs }: PoolOptions = {}): Knex.Config {
  return {
    client: 'pg',
    // pg reads sslmode from the URL (Heroku: ?sslmode=no-verify).
    connection: { connectionString: databaseUrl, connectionTimeoutMillis: connectTimeoutMs, query_timeout: queryTimeoutMs },
    pool: { min: 0, max: poolMax },
    acquireConnectionTimeout: connectTimeoutMs,
    migrations: { migrationSource, tableName: 'knex_migrations' },
  };
}

export function createKnex(databaseUrl: string, options?: PoolOptions): Knex {
  return knexFactory(knexConfig(databaseUrl, options));
}

/** The web tier answers 503 within 2 s when Postgres is unreachable or stops answering. */
export const WEB_POOL: PoolOptions = { connectTimeoutMs: 1000, queryTimeoutMs: 1500 };
/** Workers wait longer (a run survives a short blip) but never forever. */
export const WORKER_POOL: PoolOptions = { connectTimeoutMs: 2000, queryTimeoutMs: 30_000 };

export async function migrateLatest(knex: Knex): Promise<string[]> {
  const [, applied] = (await knex.migrate.latest()) as [number, string[]];
  return applied;
}
