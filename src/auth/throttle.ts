import { RateLimitedError } from '../http/errors.js';
import type { RedisKeys, ScriptedRedis } from '../shared/redis-keys.js';

export interface ThrottleLimits {
  perAccount: number;
  perAddress: number;
  windowSeconds: number;
}

export const DEFAULT_THROTTLE: ThrottleLimits = { perAccount: 5, perAddress: 20, windowSeconds: 15 * 60 };

/** Counts failed logins per account and per client address in Redis; past the limit → 429. */
export class LoginThrottle {
  constructor(
    private readonly redis: ScriptedRedis,
    private readonly keys: RedisKeys,
    private readonly limits: ThrottleLimits = DEFAULT_THROTTLE,
  ) {}

  async check(email: string, address: string): Promise<void> {
    const accountKey = this.keys.loginFailuresForAccount(email);
    const addressKey = this.keys.loginFailuresForAddress(address);
    const replies = (await this.redis.multi().get(accountKey).ttl(accountKey).get(addressKey).ttl(addressKey).exec()) ?? [];
    const [account, accountTtl, fromAddress, addressTtl] = replies.map(([err, value]) => {
      if (err) throw err;
      return Number(value ?? 0);
    }) as [number, number, number, number];
    if (account >= this.limits.perAccount) this.refuse(accountTtl);
    if (fromAddress >= this.limits.perAddress) this.refuse(addressTtl);
  }

  private refuse(ttl: number): never {
    throw new RateLimitedError('Too many failed login attempts; try again later', ttl > 0 ? ttl : this.limits.windowSeconds);
  }

  async recordFailure(email: string, address: string): Promise<void> {
    await Promise.all([
      this.redis.incrementWindow(this.keys.loginFailuresForAccount(email), this.limits.windowSeconds),
      this.redis.incrementWindow(this.keys.loginFailuresForAddress(address), this.limits.windowSeconds),
    ]);
  }

  async recordSuccess(email: string): Promise<void> {
    await this.redis.del(this.keys.loginFailuresForAccount(email));
  }
}
