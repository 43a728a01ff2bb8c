import type { Knex } from 'knex';
import type { Config } from './config.js';
import type { Logger } from './logger.js';
import { bindModels } from './db/models.js';
import { redisKeys, type ScriptedRedis } from './shared/redis-keys.js';
import { JwtService } from './auth/jwt.js';
import { CredentialCache } from './auth/cache.js';
import { UsageRecorder } from './auth/usage.js';
import { Authenticator } from './auth/authenticator.js';
import { SessionService } from './auth/sessions.js';
import { LoginThrottle, DEFAULT_THROTTLE, type ThrottleLimits } from './auth/throttle.js';
import { ApiKeyService } from './auth/api-keys.js';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { INGEST_QUEUE, RUN_QUEUE, type IngestJob, type RunJob } from './shared/jobs.js';
import { KnowledgeService } from './knowledge/service.js';
import { EventPublisher } from './shared/publisher.js';
import { RunService } from './runs/service.js';
import { EventRelay } from './runs/relay.js';
import type { SseStream } from './http/sse.js';

export interface IdentityClients {
  config: Config;
  knex: Knex;
  /** Command connection (fail-fast on the web tier); BullMQ's queue shares it. */
  redis: ScriptedRedis;
  logger: Logger;
}

export interface Clients extends IdentityClients {
  /** The shared subscriber (doorbells, credential invalidations). */
  subscriber: Redis;
  /** Reads run streams for the relay; waits out outages instead of failing fast. */
  reader: Redis;
}

export interface ServiceOptions {
  throttle?: ThrottleLimits;
}

/** Users, keys and sessions: all that the CLI and first boot need. */
export function buildIdentityServices(clients: IdentityClients, options: ServiceOptions = {}) {
  const { config, knex, redis, logger } = clients;
  const models = bindModels(knex);
  const keys = redisKeys(config.redis.keyPrefix);
  const jwt = new JwtService(config.jwt);
  const cache = new CredentialCache(redis, keys.authInvalidationChannel);
  const usage = new UsageRecorder(knex, (err) => logger.warn({ err }, 'could not record API key usage'));
  const authenticator = new Authenticator(models, jwt, cache, usage);
  const throttle = new LoginThrottle(redis, keys, options.throttle ?? DEFAULT_THROTTLE);
  const sessions = new SessionService(models, jwt, throttle, config.jwt.refreshTtlSeconds);
  const apiKeys = new ApiKeyService(models, cache, usage);
  return { ...clients, models, keys, jwt, cache, usage, authenticator, sessions, apiKeys };
}

/** Wires the web tier's services from live clients. Entry points and tests both call this. */
export function buildServices(clients: Clients, options: ServiceOptions = {}) {
  const identity = buildIdentityServices(clients, options);
  const { knex, redis, subscriber, reader, logger } = clients;
  const { models, keys } = identity;
  const queue = new Queue<RunJob>(RUN_QUEUE, { connection: redis, prefix: keys.bullPrefix });
  const publisher = new EventPublisher(redis, keys);
  const runs = new RunService(knex, models, redis, keys, queue, publisher, { perUser: clients.config.runs.perUserLimit });
  const relay = new EventRelay(subscriber, reader, keys, (err) => logger.warn({ err }, 'event relay read failed'));
  const openStreams = new Set<SseStream>();
  const ingestQueue = new Queue<IngestJob>(INGEST_QUEUE, { connection: redis, prefix: keys.bullPrefix });
  const knowledge = new KnowledgeService(knex, models, ingestQueue);
  return { ...identity, ...clients, queue, ingestQueue, publisher, runs, relay, openStreams, knowledge };
}
export type Services = ReturnType<typeof buildServices>;
