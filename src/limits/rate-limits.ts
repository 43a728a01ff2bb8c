import * as v from 'valibot';
import { RateLimitedError } from '../shared/errors.js';
import type { RedisKeys } from '../shared/redis-keys.js';
import { isNoScript, type ScriptCommands } from '../shared/redis-scripts.js';

/**
 * Request rate limits (DESIGN §18): `rate_limit_rpm` on API keys and users, and DEFAULT_RATE_LIMIT_RPM
 * where neither sets one. The limit travels in the principal (built from the cached key and user rows),
 * so a request costs at most one Redis round trip (one script) and no Postgres read; a credential
 * without a limit costs nothing at all.
 *
 * The algorithm is GCRA (src/shared/lua/rateLimit-1.lua): the whole limit may be used at once, then one
 * request comes back every 60/limit seconds. A steady client gets `limit` requests a minute; a client
 * that bursts gets at most `limit` at once, and at most `limit` + (seconds / interval) in any span of
 * seconds, so never the 2× burst of fixed windows at their edge (a full minute after a burst holds at
 * most 2 × limit − 1: the burst and the minute's refill).
 *
 * Batches. Redis stays the one count shared by every web process, but a process reserves a credential's
 * requests `batch = max(1, floor(limit / 1000))` at a time (RateLimiter below), so a limit of 100,000
 * rpm costs one script per 100 requests — or, used well below its limit, one per 60 ms (a batch's cells
 * span batch × interval = 60 ms from a fresh state and lapse as they pass: see below), at most ~17 a
 * second per credential and process whatever its traffic. Every limit below 2,000 rpm has a batch of 1
 * and is exactly as before: one script per request, nothing held. What batches cost in exactness:
 *
 * - Never admitted late. The script grants a reservation as the GCRA cells [old TAT, new TAT), one
 *   interval apart, each at most one window − interval ahead of the moment it was granted. The process
 *   spends each held request no later than its own cell (its local clock started before the call was
 *   sent, and the cell offsets are rounded down, so it errs early), and a cell whose moment has passed is
 *   dropped. A request spent at t from cell s therefore has t ≤ s ≤ t + window − interval, the same as
 *   GCRA gives a request it admits at t; cells are distinct and an interval apart, so in any span
 *   [a, a + d] at most `limit` + floor(d / interval) requests are admitted across all processes — GCRA's
 *   own bound, held requests included. A leftover can never add to a fresh full burst: while it is still
 *   usable its cells are still ahead of now in Redis (the debt the fresh burst has to fit under), and
 *   once they have passed it is gone. A dropped request costs nothing later: its cell has already come
 *   back, as if spent and refilled.
 * - Refused early by at most what the other processes hold. Held requests occupy their cells in Redis,
 *   so with W web processes a request may be refused while the others still hold up to
 *   (W − 1) × batch = (W − 1) × limit / 1000 of its credential's requests (≤ 0.1 % of the limit each).
 * - `r` in the RateLimit field is Redis's remaining at this process's last reservation plus what this
 *   process still holds: other processes' spending since that call is not seen (approximate across
 *   processes, exact on one with a batch of 1); `t` is counted from that reservation.
 *
 * A process keeps at most MAX_HELD credentials' reservations (idle ones, oldest first, are dropped; a
 * dropped reservation only makes its credential's limit stricter for a moment), and one call at a time
 * per credential: requests of a credential that arrive while its call is out wait for it, then the next
 * call asks for all of them together (at least a batch), so concurrent requests never queue one Redis
 * round trip each.
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

/** What the limiter reads of a request's principal (src/auth/authenticator.ts builds it): who, and its limit. */
export interface LimitedCaller {
  user: { id: string };
  kind: 'jwt' | 'api_key';
  keyId?: string;
  keyPrefix?: string;
  rateLimitRpm: number | null;
}

/** Requests a process reserves from Redis at once for a credential of `limit` rpm: 0.1 % of it, at least 1. */
export const rateLimitBatch = (limit: number) => Math.max(1, Math.floor(limit / 1000));

/** At most this many credentials' reservations are kept per process. */
export const MAX_HELD = 10_000;

/** GCRA's interval in whole µs, as the script computes it. */
const intervalUs = (limit: number) => Math.ceil((RATE_LIMIT_WINDOW_S * 1_000_000) / limit);
/** The local monotonic clock, µs. */
const monotonicUs = () => performance.now() * 1000;

interface Waiter {
  resolve(decision: RateDecision): void;
  reject(err: unknown): void;
}

/** One credential's state in this process: the unspent part of its last reservation, and the requests waiting for a call. */
interface Held {
  /** The limit of the latest request (the next call's). */
  limit: number;
  /** The limit the held requests were reserved under. */
  heldLimit: number;
  /** Held requests are indexes [next, end) of the last reservation; request k may be spent until `firstUs + k × stepUs`. */
  next: number;
  end: number;
  firstUs: number;
  stepUs: number;
  /** Redis's remaining after the last reservation, and (local µs) when all of the limit / one more is back by its answer. */
  remaining: number;
  fullAtUs: number;
  waitAtUs: number;
  /** Requests waiting for the next call; `calling` while one is out. */
  queue: Waiter[];
  calling: boolean;
}

/**
 * Counts requests per credential (API key id; a JWT by its user) in Redis, across every web process,
 * reserving a batch at a time for large limits (see above).
 */
export class RateLimiter {
  private readonly held = new Map<string, Held>();

  /** `nowUs`: the monotonic clock (µs) held requests are spent by; a test passes one it moves itself. */
  constructor(
    private readonly redis: Pick<ScriptCommands, 'rateLimit'>,
    private readonly keys: Pick<RedisKeys, 'rateLimit'>,
    private readonly nowUs: () => number = monotonicUs,
  ) {}

  /** Admits one request of `principal` or refuses it; undefined for a credential without a limit (no Redis call). */
  take(principal: LimitedCaller): Promise<RateDecision | undefined> {
    return Promise.resolve(this.decide(principal));
  }

  /** take(), answered at once (no promise) when no call is needed: no limit, or a request held. */
  private decide(principal: LimitedCaller): RateDecision | undefined | Promise<RateDecision> {
    const limit = principal.rateLimitRpm;
    if (limit === null) return undefined;
    const key = principal.keyId
      ? this.keys.rateLimit(principal.user.id, 'key', principal.keyId)
      : this.keys.rateLimit(principal.user.id, 'user', principal.user.id);
    let state = this.held.get(key);
    if (state) {
      state.limit = limit;
      if (state.queue.length === 0) {
        const decision = this.spendHeld(state, this.nowUs());
        if (decision) return decision;
      }
    } else {
      state = this.track(key, limit);
    }
    const entry = state;
    return new Promise<RateDecision>((resolve, reject) => {
      entry.queue.push({ resolve, reject });
      if (!entry.calling) void this.pump(key, entry);
    });
  }

  /** How many credentials this process keeps state for (bounded by MAX_HELD plus those with a call out). */
  get size(): number {
    return this.held.size;
  }

  /** One held request of `state`, if it holds one whose cell has not passed (earlier ones are dropped). */
  private spendHeld(state: Held, now: number): RateDecision | undefined {
    if (state.next >= state.end) return undefined;
    if (state.heldLimit !== state.limit) {
      // The limit changed: what was reserved under the old one is not this limit's.
      state.next = state.end;
      return undefined;
    }
    const index = Math.max(state.next, Math.ceil((now - state.firstUs) / state.stepUs));
    if (index >= state.end) {
      state.next = state.end;
      return undefined;
    }
    state.next = index + 1;
    const remaining = state.remaining + (state.end - state.next);
    return {
      admitted: true,
      limit: state.heldLimit,
      remaining,
      waitSeconds: remaining > 0 ? 0 : seconds((state.waitAtUs - now) / 1000),
      fullSeconds: seconds((state.fullAtUs - now) / 1000),
    };
  }

  /**
   * Serves a credential's waiting requests, one call at a time: from what it holds, else by one call
   * for all of them (at least a batch); the requests that arrive meanwhile wait for the next round.
   */
  private async pump(key: string, state: Held): Promise<void> {
    state.calling = true;
    try {
      while (state.queue.length > 0) {
        const before = this.nowUs();
        while (state.queue.length > 0) {
          const decision = this.spendHeld(state, before);
          if (!decision) break;
          state.queue.shift()!.resolve(decision);
        }
        if (state.queue.length === 0) break;
        const waiters = state.queue.splice(0);
        const limit = state.limit;
        const wanted = Math.max(rateLimitBatch(limit), waiters.length);
        const sentUs = this.nowUs();
        let answer: [number, number, number, number];
        try {
          answer = await this.reserve(key, limit, wanted);
        } catch (err) {
          for (const waiter of waiters) waiter.reject(err);
          continue;
        }
        const [granted, remaining, waitMs, fullMs] = answer.map(Number) as [number, number, number, number];
        const at = this.nowUs();
        const served = Math.min(granted, waiters.length);
        // The waiters were admitted when the script ran, each with what is left after it.
        for (let i = 0; i < served; i++) {
          const left = remaining + (granted - i - 1);
          waiters[i]!.resolve({ admitted: true, limit, remaining: left, waitSeconds: left > 0 ? 0 : seconds(waitMs), fullSeconds: seconds(fullMs) });
        }
        for (let i = served; i < waiters.length; i++) {
          waiters[i]!.resolve({ admitted: false, limit, remaining: 0, waitSeconds: seconds(waitMs), fullSeconds: seconds(fullMs) });
        }
        // The rest is held: request k (of the granted) has the cell new TAT − (granted − k) × interval; the
        // new TAT is at least fullMs × 1000 − 999 µs after the script's now, which was after sentUs.
        const step = intervalUs(limit);
        state.heldLimit = limit;
        state.next = served;
        state.end = granted;
        state.firstUs = sentUs + fullMs * 1000 - 999 - granted * step;
        state.stepUs = step;
        state.remaining = remaining;
        state.fullAtUs = at + fullMs * 1000;
        state.waitAtUs = at + waitMs * 1000;
      }
    } finally {
      state.calling = false;
      if (state.next >= state.end && state.queue.length === 0 && this.held.get(key) === state) this.held.delete(key);
    }
  }

  private reserve(key: string, limit: number, wanted: number): Promise<[number, number, number, number]> {
    const call = () => this.redis.rateLimit(key, limit, RATE_LIMIT_WINDOW_S * 1000, wanted);
    return call().catch((err: unknown) => (isNoScript(err) ? call() : Promise.reject(err)));
  }

  /** A new credential's state; at MAX_HELD, first those that hold nothing usable go, then the oldest idle ones. */
  private track(key: string, limit: number): Held {
    if (this.held.size >= MAX_HELD) {
      const now = this.nowUs();
      for (const [k, s] of this.held) {
        if (!s.calling && s.queue.length === 0 && (s.next >= s.end || now > s.firstUs + (s.end - 1) * s.stepUs)) this.held.delete(k);
      }
      const target = Math.floor(MAX_HELD * 0.9);
      for (const [k, s] of this.held) {
        if (this.held.size <= target) break;
        if (!s.calling && s.queue.length === 0) this.held.delete(k);
      }
    }
    const state: Held = { limit, heldLimit: limit, next: 0, end: 0, firstUs: 0, stepUs: 1, remaining: 0, fullAtUs: 0, waitAtUs: 0, queue: [], calling: false };
    this.held.set(key, state);
    return state;
  }

  /**
   * The route-side step: sets the RateLimit fields on the response (every answer to a limited
   * credential carries them, errors included) and throws 429 `rate_limited` with Retry-After when refused.
   * Answers at once (no promise, so no extra turn of the event loop) when no Redis call is needed.
   */
  admit(principal: LimitedCaller, setHeaders: (headers: Record<string, string>) => void): void | Promise<void> {
    const decided = this.decide(principal);
    if (decided instanceof Promise) return decided.then((decision) => this.apply(principal, decision, setHeaders));
    if (decided) this.apply(principal, decided, setHeaders);
  }

  private apply(principal: LimitedCaller, decision: RateDecision, setHeaders: (headers: Record<string, string>) => void): void {
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
