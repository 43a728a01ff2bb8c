import { RateLimitedError } from '../shared/errors.js';
import type { RedisKeys, ScriptedRedis } from '../shared/redis-keys.js';

export interface ThrottleLimits {
  /** Failed logins for one account from one address before that address is refused for the account. */
  perAccountAddress: number;
  /** Failed logins from one address, any accounts, before it is refused. */
  perAddress: number;
  /**
   * Failed logins for one account from anywhere, past which every address that has itself failed
   * on the account is refused (a distributed guesser gets one try per fresh address). An address
   * with no failures on the account is never refused for it: the owner can always log in.
   */
  perAccount: number;
  windowSeconds: number;
}

export const DEFAULT_THROTTLE: ThrottleLimits = { perAccountAddress: 5, perAddress: 20, perAccount: 50, windowSeconds: 15 * 60 };

/**
 * Counts failed logins in Redis per (account, address), per address and per account; past a limit → 429.
 * Lockout is never account-wide, so failed logins from elsewhere cannot lock the owner out.
 */
export class LoginThrottle {
  constructor(
    private readonly redis: ScriptedRedis,
    private readonly keys: RedisKeys,
    private readonly limits: ThrottleLimits = DEFAULT_THROTTLE,
  ) {}

  private counters(email: string, address: string) {
    return {
      pair: this.keys.loginFailuresForAccountAtAddress(email, address),
      address: this.keys.loginFailuresForAddress(address),
      account: this.keys.loginFailuresForAccount(email),
    };
  }

  async check(email: string, address: string): Promise<void> {
    const keys = this.counters(email, address);
    const [[pair, pairTtl], [fromAddress, addressTtl], [account]] = await Promise.all([this.read(keys.pair), this.read(keys.address), this.read(keys.account)]);
    if (fromAddress >= this.limits.perAddress) this.refuse(addressTtl, 'login failures from this address');
    if (pair >= this.limits.perAccountAddress) this.refuse(pairTtl, 'login failures for this account from this address');
    if (pair > 0 && account >= this.limits.perAccount) this.refuse(pairTtl, 'login failures for this account from many addresses');
  }

  /** A counter and the seconds left in its window (one key per transaction: the keys may live in different cluster slots). */
  private async read(key: string): Promise<[number, number]> {
    const replies = (await this.redis.multi().get(key).ttl(key).exec()) ?? [];
    const [count, ttl] = replies.map(([err, value]) => {
      if (err) throw err;
      return Number(value ?? 0);
    });
    return [count ?? 0, ttl ?? 0];
  }

  private refuse(ttl: number, cause: string): never {
    const retryAfter = ttl > 0 ? ttl : this.limits.windowSeconds;
    throw new RateLimitedError('Too many failed login attempts; try again later', retryAfter, `login throttle: ${cause}`);
  }

  async recordFailure(email: string, address: string): Promise<void> {
    const keys = this.counters(email, address);
    await Promise.all([keys.pair, keys.address, keys.account].map((key) => this.redis.incrementWindow(key, this.limits.windowSeconds)));
  }

  /** The account-wide count stays: the owner logging in must not hand a distributed guesser a fresh budget. */
  async recordSuccess(email: string, address: string): Promise<void> {
    await this.redis.del(this.counters(email, address).pair);
  }
}
