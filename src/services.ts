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

export interface Clients {
  config: Config;
  knex: Knex;
  /** Command connection (fail-fast on the web tier). */
  redis: ScriptedRedis;
  logger: Logger;
}

export interface ServiceOptions {
  throttle?: ThrottleLimits;
}

/** Wires the web tier's services from live clients. Entry points and tests both call this. */
export function buildServices(clients: Clients, options: ServiceOptions = {}) {
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
export type Services = ReturnType<typeof buildServices>;
