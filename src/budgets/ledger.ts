import type { RedisKeys } from '../shared/redis-keys.js';
import type { ScriptedRedis } from '../shared/redis-scripts.js';

/**
 * Token budgets (DESIGN §18): `{limit, period}` on API keys and users; the tokens every model call of
 * their runs reports are charged to the current period's counter in Redis when the call returns, so
 * every web process and worker sees the same total without a Postgres read. Periods are UTC calendar
 * days and months. While a call is in flight it holds a reservation on each budget (DESIGN §21), so
 * the calls of one budget, wherever they run, never together start past its limit.
 */

export * from '../shared/budget-terms.js';
import { type BudgetPeriod, type BudgetRef, type TokenUsage } from '../shared/budget-terms.js';

/** The period that contains `now`: its first instant and the next period's. */
export function periodOf(period: BudgetPeriod, now: Date): { start: Date; resetsAt: Date } {
  const year = now.getUTCFullYear();
  const month = now.getUTCMonth();
  if (period === 'month') return { start: new Date(Date.UTC(year, month, 1)), resetsAt: new Date(Date.UTC(year, month + 1, 1)) };
  const day = now.getUTCDate();
  return { start: new Date(Date.UTC(year, month, day)), resetsAt: new Date(Date.UTC(year, month, day + 1)) };
}

/** A spent budget: which, and when it resets. */
export interface SpentBudget {
  ref: BudgetRef;
  resetsAt: Date;
}

/** A model call's hold on its run's budgets while it is in flight (DESIGN §21). */
export interface BudgetReservation {
  /** Unique per call. */
  callId: string;
  /** Its prompt tokens plus the completion it may write (at most BUDGET_RESERVE_COMPLETION_TOKENS). */
  tokens: number;
}

export type ReserveOutcome = { outcome: 'reserved' } | { outcome: 'wait' } | { outcome: 'spent'; spent: SpentBudget };

const memberOf = ({ callId, tokens }: BudgetReservation) => `${callId}:${tokens}`;

/** reserveBudgets-4.lua's answer, decoded: 0 reserved, 1 wait, 2 spent (with the budget's index, from 1). */
function reserveOutcome(code: number, ref: BudgetRef | undefined, period: { resetsAt: Date } | undefined): ReserveOutcome {
  if (code === 0) return { outcome: 'reserved' };
  if (code === 1) return { outcome: 'wait' };
  if (code === 2 && ref && period) return { outcome: 'spent', spent: { ref, resetsAt: period.resetsAt } };
  throw new Error(`reserveBudgets answered an unknown outcome ${code}`);
}

/** Counters outlive their period by a day, so a read at the edge never meets a counter gone early. */
const EXPIRY_MARGIN_S = 24 * 3600;

export class BudgetLedger {
  constructor(
    private readonly redis: ScriptedRedis,
    private readonly keys: Pick<RedisKeys, 'tokenBudget' | 'tokenBudgetHeld'>,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async usage(ref: BudgetRef): Promise<TokenUsage> {
    const { start, resetsAt } = periodOf(ref.period, this.now());
    const used = Number((await this.redis.get(this.counter(ref, start))) ?? 0);
    return { used, period_start: start.toISOString(), resets_at: resetsAt.toISOString() };
  }

  /** The first of `refs` already spent in its period, if any: one round trip, none without budgets. */
  async spent(refs: readonly BudgetRef[]): Promise<SpentBudget | undefined> {
    if (refs.length === 0) return undefined;
    const now = this.now();
    const periods = refs.map((ref) => periodOf(ref.period, now));
    const used = await this.redis.mget(...refs.map((ref, i) => this.counter(ref, periods[i]!.start)));
    const index = refs.findIndex((ref, i) => Number(used[i] ?? 0) >= ref.limit);
    return index === -1 ? undefined : { ref: refs[index]!, resetsAt: periods[index]!.resetsAt };
  }

  /**
   * Reserves a model call's `tokens` on every budget of `refs` for `ttlMs` (DESIGN §21), in one step:
   * `reserved`, or `wait` (another call of a budget holds what is left), or `spent`.
   */
  async reserve(refs: readonly BudgetRef[], reservation: BudgetReservation, ttlMs: number): Promise<ReserveOutcome> {
    const { keys, limits, expiries, periods } = this.scriptArguments(refs);
    const [code, index] = await this.redis.reserveBudgets(...keys, memberOf(reservation), reservation.tokens, ttlMs, ...limits, ...expiries);
    return reserveOutcome(code, refs[index - 1], periods[index - 1]);
  }

  /** Replaces a call's reservation by the tokens it used, on every budget of `refs` at once; true when one of them is now spent. */
  async settle(refs: readonly BudgetRef[], reservation: BudgetReservation, used: number): Promise<boolean> {
    const { keys, limits, expiries } = this.scriptArguments(refs);
    return (await this.redis.settleBudgets(...keys, memberOf(reservation), reservation.tokens, Math.ceil(Math.max(0, used)), ...limits, ...expiries)) === 1;
  }

  /** The scripts' KEYS and limits: two budgets (a run with one passes it twice, the second's limit 0: left alone). */
  private scriptArguments(refs: readonly BudgetRef[]) {
    const now = this.now();
    const periods = refs.map((ref) => periodOf(ref.period, now));
    const [first, second = first] = refs.map((ref, i) => ({
      counter: this.counter(ref, periods[i]!.start),
      held: this.keys.tokenBudgetHeld(ref.userId, ref.scope, ref.id),
      limit: ref.limit,
      expiry: Math.ceil(periods[i]!.resetsAt.getTime() / 1000) + EXPIRY_MARGIN_S,
    }));
    return {
      keys: [first!.counter, second!.counter, first!.held, second!.held] as const,
      limits: [first!.limit, refs.length > 1 ? second!.limit : 0] as const,
      expiries: [first!.expiry, second!.expiry] as const,
      periods,
    };
  }

  private counter(ref: BudgetRef, start: Date): string {
    return this.keys.tokenBudget(ref.userId, ref.scope, ref.id, start.toISOString().slice(0, 10));
  }
}

/** The seconds until a spent budget resets, as Retry-After says them (whole, at least 1). */
export const secondsUntil = (at: Date, now = new Date()) => Math.max(1, Math.ceil((at.getTime() - now.getTime()) / 1000));
