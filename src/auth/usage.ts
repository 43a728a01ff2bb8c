import type { Knex } from 'knex';

/**
 * Counts API-key use in memory and writes it in one statement per flush, so a request costs
 * no Postgres write (DESIGN §3). Counts not yet flushed when a process dies are lost; that is
 * the accepted price for keeping the hot path free of writes.
 */
export class UsageRecorder {
  private pending = new Map<string, { count: number; lastUsedAt: Date }>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly knex: Knex,
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  record(keyId: string, at = new Date()): void {
    const entry = this.pending.get(keyId);
    if (entry) {
      entry.count += 1;
      entry.lastUsedAt = at;
    } else {
      this.pending.set(keyId, { count: 1, lastUsedAt: at });
    }
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    const values = [...batch].map(([id, { count, lastUsedAt }]) => [id, count, lastUsedAt]);
    try {
      await this.knex.raw(
        `update api_keys set total_requests = total_requests + v.count,
                last_used_at = greatest(api_keys.last_used_at, v.last_used_at)
           from (values ${values.map(() => '(?::uuid, ?::bigint, ?::timestamptz)').join(', ')}) as v(id, count, last_used_at)
          where api_keys.id = v.id`,
        values.flat(),
      );
    } catch (err) {
      for (const [id, entry] of batch) {
        const current = this.pending.get(id);
        this.pending.set(id, current ? { count: current.count + entry.count, lastUsedAt: current.lastUsedAt } : entry);
      }
      throw err;
    }
  }

  start(intervalMs = 5000): void {
    this.timer = setInterval(() => this.flush().catch(this.onError), intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush().catch(this.onError);
  }
}
