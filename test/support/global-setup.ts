import { randomBytes } from 'node:crypto';
import type { TestProject } from 'vitest/node';
import { Redis } from 'ioredis';
import { deleteKeysWithPrefix } from '../../src/shared/redis-keys.js';
import { createDatabase } from './database.js';

/** One database and one Redis key prefix per test run, created here and removed afterwards (DESIGN §7). */
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    redisUrl: string;
    redisPrefix: string;
  }
}

export default async function setup(project: TestProject) {
  const id = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const redisPrefix = `ap_test_${id}:`;
  const database = await createDatabase(`ap_test_${id}`);

  project.provide('databaseUrl', database.url);
  project.provide('redisUrl', REDIS_URL);
  project.provide('redisPrefix', redisPrefix);

  return async () => {
    await database.drop();
    const redis = new Redis(REDIS_URL);
    await deleteKeysWithPrefix(redis, redisPrefix);
    redis.disconnect();
  };
}
