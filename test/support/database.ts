import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createKnex, migrateLatest } from '../../src/db/knex.js';

/** Where tests create and drop databases (the machine's Postgres, trust auth). */
export const ADMIN_URL = process.env.TEST_POSTGRES_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export async function asAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A new, migrated database; `drop` removes it. */
export async function createDatabase(name = `ap_test_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`) {
  await asAdmin((client) => client.query(`create database "${name}"`));
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const knex = createKnex(url.toString(), { poolMax: 2 });
  try {
    await migrateLatest(knex);
  } finally {
    await knex.destroy();
  }
  return {
    url: url.toString(),
    drop: () => asAdmin((client) => client.query(`drop database if exists "${name}" with (force)`)),
  };
}
