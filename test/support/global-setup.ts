import { randomBytes } from 'node:crypto';
import type { TestProject } from 'vitest/node';
import pg from 'pg';
import { Redis } from 'ioredis';
import { createKnex, migrateLatest } from '../../src/db/knex.js';
import { deleteKeysWithPrefix } from '../../src/shared/redis-keys.js';

/** One database and one Redis key prefix per test run, created here and removed afterwards (DESIGN §7). */
const ADMIN_URL = process.env.TEST_POSTGRES_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    redisUrl: string;
    redisPrefix: string;
  }
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export default async function setup(project: TestProject) {
  const id = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const database = `ap_test_${id}`;
  const databaseUrl = new URL(ADMIN_URL);
  databaseUrl.pathname = `/${database}`;
  const redisPrefix = `ap_test_${id}:`;

  await admin((client) => client.query(`create database "${database}"`));
  const knex = createKnex(databaseUrl.toString(), { poolMax: 2 });
  await migrateLatest(knex);
  await knex.destroy();

  project.provide('databaseUrl', databaseUrl.toString());
  project.provide('redisUrl', REDIS_URL);
  project.provide('redisPrefix', redisPrefix);

  return async () => {
    await admin((client) => client.query(`drop database if exists "${database}" with (force)`));
    const redis = new Redis(REDIS_URL);
    await deleteKeysWithPrefix(redis, redisPrefix);
    redis.disconnect();
  };
}
