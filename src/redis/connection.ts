import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { Config } from '../config.js';
import { withScripts, type RedisClient, type ScriptedRedis } from '../shared/redis-scripts.js';

/**
 * Connection roles (DESIGN §5): web commands fail fast so an outage answers 503 at once; the
 * rest wait out an outage instead. The connections that many runs share for short commands
 * (web commands, a worker's run protocol, the web's stream reader) pipeline: commands issued in
 * one turn of the event loop leave in one write (`coalesceWrites` on a single Redis, ioredis's
 * auto-pipelining on a cluster, which must group commands by slot). Subscribers and BullMQ's
 * blocking connections stay plain.
 */
export type RedisRole = 'web-commands' | 'worker-commands' | 'stream-reader' | 'subscriber' | 'patient';

const pipelined = (role: RedisRole) => role === 'web-commands' || role === 'worker-commands' || role === 'stream-reader';

export function redisOptions(config: Config['redis'], role: RedisRole): RedisOptions {
  const options: RedisOptions = {
    connectTimeout: 2000,
    retryStrategy: (attempt) => Math.min(100 * 2 ** attempt, 2000),
  };
  if (config.url.startsWith('rediss://')) options.tls = { rejectUnauthorized: config.tlsRejectUnauthorized };
  if (role === 'web-commands') {
    options.enableOfflineQueue = false;
    options.maxRetriesPerRequest = 1;
    options.commandTimeout = 2000;
  } else {
    options.maxRetriesPerRequest = null;
  }
  return options;
}

/**
 * The same roles on a Redis Cluster (DESIGN §13). Credentials and TLS come from REDIS_URL. Node
 * connections reconnect on their own (a restarted node is back without a failover); a subscriber
 * listens on sharded pub/sub, one connection per master that holds a subscribed channel's slot.
 */
export function clusterOptions(config: Config['redis'], role: RedisRole, name: string): ClusterOptions {
  const { retryStrategy, enableOfflineQueue, ...node } = redisOptions(config, role);
  const url = new URL(config.url);
  if (url.username) node.username = decodeURIComponent(url.username);
  if (url.password) node.password = decodeURIComponent(url.password);
  return {
    redisOptions: { ...node, connectionName: name },
    clusterRetryStrategy: retryStrategy,
    clusterNodeRetryStrategy: retryStrategy,
    enableAutoPipelining: pipelined(role),
    enableOfflineQueue,
    shardedSubscribers: role === 'subscriber',
    // A sharded subscriber whose node restarted is replaced on a slots refresh; refresh regularly so
    // one that failed while the node was down is retried once it is back.
    ...(role === 'subscriber' && { slotsRefreshInterval: 2000 }),
    // A command whose node's connection closed is tried again (16 times at most, or 8 on the web
    // tier, which fails fast): the web answers 503 within half a second, the rest ride out a node's
    // restart of about five seconds (then a worker hands its run back, as for a single Redis's outage).
    retryDelayOnFailover: role === 'web-commands' ? 50 : 300,
    maxRedirections: role === 'web-commands' ? 8 : 16,
    retryDelayOnClusterDown: 300,
  };
}

export function createRedis(config: Config['redis'], role: RedisRole, name: string): ScriptedRedis {
  const redis: RedisClient = config.clusterNodes.length
    ? new Cluster(config.clusterNodes, clusterOptions(config, role, name))
    : new Redis(config.url, { ...redisOptions(config, role), connectionName: name });
  if (redis instanceof Redis && pipelined(role)) coalesceWrites(redis);
  // Errors surface through the commands that fail; the 'error' event only needs a listener.
  redis.on('error', () => {});
  return withScripts(redis);
}

/**
 * Holds a connection's writes until the event loop's next turn (as ioredis's auto-pipelining
 * waits for), so the commands of one turn leave in one write. Auto-pipelining builds a Pipeline
 * per turn instead, and each copies every script defined on the connection (ours and the 64 a
 * BullMQ Queue sharing it adds): in the worker's CPU profile that copy cost more than the
 * commands it carried.
 */
function coalesceWrites(redis: Redis): void {
  const send = redis.sendCommand;
  let held: Redis['stream'] | undefined;
  redis.sendCommand = function (this: Redis, command, stream) {
    const socket = this.stream;
    if (stream === undefined && held === undefined && this.status === 'ready' && socket?.writable) {
      held = socket;
      socket.cork();
      setImmediate(() => {
        held = undefined;
        socket.uncork();
      });
    }
    return send.call(this, command, stream);
  };
}

/** Resolves once the connection is ready (entry points wait for it before serving). */
export async function waitForReady(redis: RedisClient, timeoutMs = 10_000): Promise<void> {
  if (redis.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Redis not ready after ${timeoutMs} ms`)), timeoutMs);
    redis.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
