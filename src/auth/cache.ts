import type { Redis } from 'ioredis';
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
}

/**
 * Warm credentials cost no Postgres round trip. A change to a key or user is published on
 * one channel and every web process drops its copy; the TTL bounds staleness if a message is lost.
 */
export class CredentialCache {
  readonly keys = new TtlCache<string, { key: ApiKey; user: User }>(30_000);
  readonly users = new TtlCache<string, User>(30_000);

  constructor(
    private readonly publisher: Redis,
    private readonly channel: string,
  ) {}

  /** Subscribes on the process's shared subscriber connection. */
  listen(subscriber: Redis): Promise<unknown> {
    subscriber.on('message', (channel: string, message: string) => {
      if (channel === this.channel) this.forget(message);
    });
    return subscriber.subscribe(this.channel);
  }

  private forget(message: string) {
    const [kind, id] = message.split(':', 2) as [string, string];
    if (kind === 'key') this.keys.delete(id);
    if (kind === 'user') this.users.delete(id);
  }

  /** Drops the key everywhere (this process at once, the others via pub/sub). */
  async invalidateKey(keyHash: string): Promise<void> {
    this.forget(`key:${keyHash}`);
    await this.publisher.publish(this.channel, `key:${keyHash}`);
  }
}
