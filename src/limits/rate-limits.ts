import * as v from 'valibot';
import { RateLimitedError } from '../shared/errors.js';
import type { RedisKeys } from '../shared/redis-keys.js';
import { isNoScript, type ScriptedRedis } from '../shared/redis-scripts.js';

/**
 * Request rate limits (DESIGN §18): `rate_limit_rpm` on API keys and users, and DEFAULT_RATE_LIMIT_RPM
 * where neither sets one. The limit travels in the principal (built from the cached key and user rows),
 * so a request costs one Redis round trip (one script) and no Postgres read; a credential without a
 * limit costs nothing at all.
 *
 * The algorithm is GCRA (src/shared/lua/rateLimit-1.lua): the whole limit may be used at once, then one
 * request comes back every 60/limit seconds. A steady client gets `limit` requests a minute; a client
 * that bursts gets at most `limit` at once, and at most `limit` + (seconds / interval) in any span of
 * seconds, so never the 2× burst of fixed windows at their edge (a full minute after a burst holds at
 * most 2 × limit − 1: the burst and the minute's refill).
 */

export const RATE_LIMIT_MAX = 100_000;
/** The period of the policy: requests per minute. */
export const RATE_LIMIT_WINDOW_S = 60;
/** The policy's name in the RateLimit fields. */
const POLICY = 'rpm';

/** A request field: 1–100,000 requests per minute, or null (none of its own). */
export const rateLimitField = v.nullable(
  v.pipe(
    v.number(),
    v.integer(),
    v.minValue(1),
    v.maxValue(RATE_LIMIT_MAX),
    v.description('Requests per minute (1–100,000); null: none of its own (a key: its user\'s; else DEFAULT_RATE_LIMIT_RPM)'),
  ),
);

/** The limit that binds: the lower of two (a key's and its user's), either absent, else the default. */
export function effectiveRateLimit(own: number | null | undefined, user: number | null | undefined, fallback: number | null): number | null {
  if (own != null && user != null) return Math.min(own, user);
  return own ?? user ?? fallback;
}

export interface RateDecision {
  admitted: boolean;
  limit: number;
  remaining: number;
  /** Seconds until one more request is admitted (0 while some remain). */
  waitSeconds: number;
  /** Seconds until the whole limit is back. */
  fullSeconds: number;
}

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/**
 * The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers): one policy `"rpm"`, `q` requests
 * per `w` seconds; `r` requests remaining and `t` seconds: while some remain, until all are back; at
 * none, until the next one is (what Retry-After says on a 429). Structured-field lists of strings with
 * integer parameters.
 */
export function rateLimitHeaders(decision: RateDecision): Record<string, string> {
  const t = decision.remaining > 0 ? decision.fullSeconds : decision.waitSeconds;
  return {
    'RateLimit-Policy': `"${POLICY}";q=${decision.limit};w=${RATE_LIMIT_WINDOW_S}`,
    RateLimit: `"${POLICY}";r=${decision.remaining};t=${t}`,
  };
}

/** Counts requests per credential (API key id; a JWT by its user) in Redis, across every web process. */
/** What the limiter reads of a request's principal (src/auth/authenticator.ts builds it): who, and its limit. */
export interface LimitedCaller {
  user: { id: string };
  kind: 'jwt' | 'api_key';
  keyId?: string;
  keyPrefix?: string;
  rateLimitRpm: number | null;
}

export class RateLimiter {
  constructor(
    private readonly redis: ScriptedRedis,
    private readonly keys: Pick<RedisKeys, 'rateLimit'>,
  ) {}

  /** Admits one request of `principal` or refuses it; undefined for a credential without a limit (no Redis call). */
  async take(principal: LimitedCaller): Promise<RateDecision | undefined> {
    const limit = principal.rateLimitRpm;
    if (limit === null) return undefined;
    const key = principal.keyId
      ? this.keys.rateLimit(principal.user.id, 'key', principal.keyId)
      : this.keys.rateLimit(principal.user.id, 'user', principal.user.id);
    const call = () => this.redis.rateLimit(key, limit, RATE_LIMIT_WINDOW_S * 1000);
    const [admitted, remaining, waitMs, fullMs] = await call().catch((err: unknown) => (isNoScript(err) ? call() : Promise.reject(err)));
    return { admitted: admitted === 1, limit, remaining, waitSeconds: remaining > 0 ? 0 : seconds(waitMs), fullSeconds: seconds(fullMs) };
  }

  /**
   * The route-side step: sets the RateLimit fields on the response (every answer to a limited
   * credential carries them, errors included) and throws 429 `rate_limited` with Retry-After when refused.
   */
  async admit(principal: LimitedCaller, setHeaders: (headers: Record<string, string>) => void): Promise<void> {
    const decision = await this.take(principal);
    if (!decision) return;
    setHeaders(rateLimitHeaders(decision));
    if (decision.admitted) return;
    const who = principal.kind === 'api_key' ? 'API key' : 'user';
    throw new RateLimitedError(
      `Rate limit exceeded: this ${who} may make ${decision.limit} requests per minute; retry after ${decision.waitSeconds} s`,
      decision.waitSeconds,
      `rate limit: ${decision.limit} rpm for ${principal.kind === 'api_key' ? `key ${principal.keyPrefix ?? principal.keyId}` : `user ${principal.user.id}`}`,
    );
  }
}
