import { randomBytes } from 'node:crypto';
import type { TestProject } from 'vitest/node';
import { Cluster, Redis } from 'ioredis';
import { deleteKeysWithPrefix } from '../../src/shared/redis-keys.js';
import { copyOfDatabase, migratedDatabase } from './database.js';
import { ThrowawayRedisCluster } from './redis-cluster.js';
import { clusterNodes } from './redis-modes.js';

/**
 * One database and one Redis key prefix per test run, created here and removed afterwards (DESIGN §7).
 * The migrations run once, into a template every test database is copied from (test/support/database.ts).
 */
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** The run suites also run on a Redis Cluster: TEST_REDIS_CLUSTER_NODES names one, else a throwaway three-node one is started. */
const CLUSTER_NODES = process.env.TEST_REDIS_CLUSTER_NODES;

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    /** The migrated database every test database is a copy of. */
    databaseTemplate: string;
    redisUrl: string;
    redisPrefix: string;
    redisClusterNodes: string;
  }
}

export default async function setup(project: TestProject) {
  const id = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const redisPrefix = `ap_test_${id}:`;
  const migrated = async () => {
    const template = await migratedDatabase(`ap_template_${id}`);
    return { template, database: await copyOfDatabase(template.name, `ap_test_${id}`) };
  };
  const [{ template, database }, cluster] = await Promise.all([migrated(), CLUSTER_NODES ? undefined : ThrowawayRedisCluster.start()]);

  project.provide('databaseUrl', database.url);
  project.provide('databaseTemplate', template.name);
  project.provide('redisUrl', REDIS_URL);
  project.provide('redisPrefix', redisPrefix);
  project.provide('redisClusterNodes', CLUSTER_NODES ?? cluster!.nodeList);

  return async () => {
    await Promise.all([database.drop(), template.drop()]);
    const redis = new Redis(REDIS_URL);
    await deleteKeysWithPrefix(redis, redisPrefix);
    redis.disconnect();
    if (cluster) return cluster.destroy();
    const external = new Cluster(clusterNodes(CLUSTER_NODES!));
    await deleteKeysWithPrefix(external, redisPrefix);
    external.disconnect();
  };
}
