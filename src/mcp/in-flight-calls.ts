import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../shared/redis-scripts.js';
import type { RedisKeys } from '../shared/redis-keys.js';

/**
 * Where an MCP `tools/call` in flight can be found by its JSON-RPC request id (DESIGN §16).
 *
 * Stateless Streamable HTTP sends `notifications/cancelled {requestId}` as a POST of its own, which
 * may reach another server instance or another web process than the call; so the call is recorded
 * in Redis, under its caller (user + credential) and request id, and the cancel looks it up there.
 *
 * One key per (user, credential, request id): a hash of call token → run id ("" until the run is
 * started), plus `<token>:cancel` once a cancel was asked for. Request ids are chosen by clients and
 * counters start at 0, so two clients of one user may have a call in flight under the same id: the
 * credential is part of the key (two clients with different keys or sessions never meet), and if two
 * calls still share a key (one credential shared by two clients), a cancel naming that id is
 * ambiguous and cancels neither — cancelling another client's run is worse than letting one finish
 * (a client that left is still covered: its closed connection cancels its run in-process).
 *
 * A cancel that arrives while the run is still being started is kept as the `:cancel` flag; the
 * call reads it when it records its run (both sides write, then read, in one MULTI each: at least
 * one of them sees the other). Entries expire after `ttlMs` (the longest a run may take), so a web
 * process that dies mid-call leaves nothing behind for long.
 */
export class InFlightCalls {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Pick<RedisKeys, 'mcpCall'>,
    private readonly ttlMs: number,
  ) {}

  /** Records a call before its run starts. */
  async begin(caller: CallerRef, requestId: string | number): Promise<InFlightCall> {
    const key = this.key(caller, requestId);
    const token = randomUUID();
    await this.redis.multi().hset(key, token, '').pexpire(key, this.ttlMs).exec();
    return new InFlightCall(this.redis, key, token, this.ttlMs);
  }

  /**
   * A client's cancel of its request: the run to cancel, `pending` when the call's run is not started
   * yet (the call cancels it itself once it is), or why there is none.
   */
  async cancel(caller: CallerRef, requestId: string | number): Promise<CancelLookup> {
    const key = this.key(caller, requestId);
    const calls = Object.keys(await this.redis.hgetall(key)).filter((field) => !field.endsWith(CANCEL));
    if (calls.length === 0) return { kind: 'unknown' };
    if (calls.length > 1) return { kind: 'ambiguous', calls: calls.length };
    const token = calls[0]!;
    const replies = await this.redis.multi().hset(key, `${token}${CANCEL}`, '1').pexpire(key, this.ttlMs).hget(key, token).exec();
    const runId = replies?.[2]?.[1];
    return typeof runId === 'string' && runId !== '' ? { kind: 'run', runId } : { kind: 'pending' };
  }

  private key(caller: CallerRef, requestId: string | number): string {
    return this.keys.mcpCall(caller.userId, caller.credential, JSON.stringify(requestId));
  }
}

const CANCEL = ':cancel';

/** Who calls: the user, and a fingerprint of the credential the request came with (never the credential). */
export interface CallerRef {
  userId: string;
  credential: string;
}

export type CancelLookup = { kind: 'run'; runId: string } | { kind: 'pending' } | { kind: 'unknown' } | { kind: 'ambiguous'; calls: number };

/** One recorded call. */
export class InFlightCall {
  constructor(
    private readonly redis: RedisClient,
    private readonly key: string,
    private readonly token: string,
    private readonly ttlMs: number,
  ) {}

  /** Records the call's run; true when a cancel came while it was being started. */
  async attach(runId: string): Promise<boolean> {
    const replies = await this.redis.multi().hset(this.key, this.token, runId).pexpire(this.key, this.ttlMs).hexists(this.key, `${this.token}${CANCEL}`).exec();
    return replies?.[2]?.[1] === 1;
  }

  async end(): Promise<void> {
    await this.redis.hdel(this.key, this.token, `${this.token}${CANCEL}`);
  }
}
