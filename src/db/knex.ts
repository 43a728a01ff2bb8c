import knexFactory, { type Knex } from 'knex';
import { migrationSource } from '../../migrations/index.js';

export function knexConfig(databaseUrl: string, poolMax = 10): Knex.Config {
  return {
    client: 'pg',
    // pg reads sslmode from the URL (Heroku: ?sslmode=no-verify).
    connection: { connectionString: databaseUrl, connectionTimeoutMillis: 2000 },
    pool: { min: 0, max: poolMax },
    acquireConnectionTimeout: 2000,
    migrations: { migrationSource, tableName: 'knex_migrations' },
  };
}

export function createKnex(databaseUrl: string, poolMax?: number): Knex {
  return knexFactory(knexConfig(databaseUrl, poolMax));
}

export async function migrateLatest(knex: Knex): Promise<string[]> {
  const [, applied] = (await knex.migrate.latest()) as [number, string[]];
  return applied;
}
