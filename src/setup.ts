import pg from 'pg';
import type { Knex } from 'knex';
import type { Config } from './config.js';
import type { Models } from './db/models.js';
import { migrateLatest } from './db/knex.js';
import { createUser, userCount } from './auth/users.js';

/** Creates the database named in the URL when it does not exist yet (a fresh development machine). */
export async function ensureDatabase(databaseUrl: string): Promise<boolean> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  if (!name) return false;
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (rowCount) return false;
    await client.query(`create database "${name.replaceAll('"', '""')}"`);
    return true;
  } finally {
    await client.end();
  }
}

/** The release step: migrations, then the ADMIN_EMAIL/ADMIN_PASSWORD admin when no user exists. */
export async function release(knex: Knex, models: Models, config: Config): Promise<{ applied: string[]; adminCreated?: string }> {
  const applied = await migrateLatest(knex);
  if (config.admin && (await userCount(models)) === 0) {
    const admin = await createUser(models, { ...config.admin, role: 'admin', name: 'Administrator' });
    return { applied, adminCreated: admin.email };
  }
  return { applied };
}
