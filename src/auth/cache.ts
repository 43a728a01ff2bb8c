import type { RedisClient as Redis } from '../shared/redis-scripts.js';
import type { ApiKey, User } from '../db/models.js';

/** A small in-process map whose entries expire; the oldest entry goes first when it is full. */
export class TtlCache<K, V> {
  private readonly entries = new Map<K, { value: V; expiresAt: number }>();
  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: K, value: V): void {
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as K);
    this.entries.set(key, { value, expiresAt: Date.now() + this.ttlMs });
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}

/**
 * Warm credentials cost no Postgres round trip. A change to a key, user or session is published on
 * one channel and every web process drops its copy within milliseconds; the TTL bounds staleness if
 * a message is lost, and a reconnected subscriber (which may have missed some) drops everything.
 */
export class CredentialCache {
  /** By key hash; the key's user is looked up in `users`, so a change to the user reaches all its keys. */
  readonly keys = new TtlCache<string, ApiKey>(30_000);
  readonly users = new TtlCache<string, User>(30_000);
  /** Session (refresh-token family) id → whether it is revoked; access tokens carry it as `sid`. */
  readonly sessions = new TtlCache<string, boolean>(30_000);
  /**
   * Counts invalidations. A lookup that started before one must not cache what it read: the
   * row may have changed after the read and before the message (see `fill`).
   */
  private epoch = 0;

  constructor(
    private readonly publisher: Redis,
    private readonly channel: string,
  ) {}

  /** Subscribes on the process's shared subscriber connection. */
  listen(subscriber: Redis): Promise<unknown> {
    subscriber.on('message', (channel: string, message: string) => {
      if (channel === this.channel) this.forget(message);
    });
    subscriber.on('ready', () => this.forgetAll());
    return subscriber.subscribe(this.channel);
  }

  /** Reads through `cache`: on a miss, loads and caches the value unless an invalidation arrived meanwhile. */
  async fill<K, V>(cache: TtlCache<K, V>, key: K, load: () => Promise<V>): Promise<V> {
    const cached = cache.get(key);
    if (cached !== undefined) return cached;
    const epoch = this.epoch;
    const value = await load();
    if (value !== undefined && epoch === this.epoch) cache.set(key, value);
    return value;
  }

  private forget(message: string) {
    this.epoch++;
    const [kind, id] = message.split(':', 2) as [string, string];
    if (kind === 'key') this.keys.delete(id);
    if (kind === 'user') {
      this.users.delete(id);
      // The user's refresh families may have been revoked with the change (a disabled user), and
      // sessions are cached by id alone: drop them all (user changes are rare; they refill on use).
      this.sessions.clear();
    }
    if (kind === 'session') this.sessions.delete(id);
  }

  private forgetAll() {
    this.epoch++;
    this.keys.clear();
    this.users.clear();
    this.sessions.clear();
  }

  /** Ends a session's access tokens on every web process (its refresh family is already revoked in Postgres). */
  invalidateSession(sessionId: string): Promise<void> {
    return this.invalidate(`session:${sessionId}`);
  }

  /** Drops the user everywhere: its keys and tokens are checked against the user row again (disabled, deleted, role). */
  invalidateUser(userId: string): Promise<void> {
    return this.invalidate(`user:${userId}`);
  }

  /** Drops the key everywhere (this process at once, the others via pub/sub). */
  invalidateKey(keyHash: string): Promise<void> {
    return this.invalidate(`key:${keyHash}`);
  }

  /** This process at once, the others via pub/sub. */
  private async invalidate(message: string): Promise<void> {
    this.forget(message);
    await this.publisher.publish(this.channel, message);
  }
}
