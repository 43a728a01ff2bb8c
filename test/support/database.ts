import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
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

export const databaseName = () => `ap_test_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

function handle(name: string): TestDatabase {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: async () => void (await asAdmin((client) => client.query(`drop database if exists "${name}" with (force)`))),
  };
}

/** A new database brought to the latest schema by running every migration. */
export async function migratedDatabase(name = databaseName()): Promise<TestDatabase> {
  await asAdmin((client) => client.query(`create database "${name}"`));
  const database = handle(name);
  const knex = createKnex(database.url, { poolMax: 2 });
  try {
    await migrateLatest(knex);
  } finally {
    await knex.destroy();
  }
  return database;
}

/**
 * A copy of `template` (a migrated database nobody is connected to): a fraction of a second where
 * running the migrations takes over one, and the same schema and migration records, so a test may
 * still roll one migration back and apply it again.
 */
export async function copyOfDatabase(template: string, name = databaseName()): Promise<TestDatabase> {
  await asAdmin((client) => client.query(`create database "${name}" template "${template}"`));
  return handle(name);
}

/**
 * A new, migrated database for a test file; `drop` removes it. A copy of the run's migrated template
 * (test/support/global-setup.ts), unless `migrate` asks for the migrations to run (a file that tests them).
 */
export async function createDatabase(options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  return options.migrate ? migratedDatabase() : copyOfDatabase(inject('databaseTemplate'));
}
