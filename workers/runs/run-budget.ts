import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { secondsUntil, type BudgetLedger, type BudgetRef, type BudgetReservation, type SpentBudget } from '../../src/budgets/ledger.js';
import type { Usage } from '../../src/shared/events.js';
import { RunFailure } from './run-control.js';

/** The run ends `failed` with this code when a budget of its key or user is spent (the gateway's own word for it). */
export const INSUFFICIENT_QUOTA = 'insufficient_quota';

/** A run stopped by a spent budget keeps what its model answered so far (DESIGN §18). */
export class BudgetSpent extends RunFailure {
  constructor(
    message: string,
    readonly answerSoFar: string | null,
  ) {
    super(INSUFFICIENT_QUOTA, message);
  }
}

const whose = (ref: BudgetRef) => (ref.scope === 'key' ? 'API key' : 'user');

export interface ReservationSettings {
  /** BUDGET_RESERVE_COMPLETION_TOKENS: the completion a call reserves at most (less when its max_tokens is lower). */
  reserveCompletionTokens: number;
  /** BUDGET_RESERVATION_TTL_S: when a reservation its worker never settled (it died) is pruned and charged. */
  reservationTtlMs: number;
}

/** BUDGET_RESERVE_COMPLETION_TOKENS and BUDGET_RESERVATION_TTL_S unset. */
export const DEFAULT_RESERVATIONS: ReservationSettings = { reserveCompletionTokens: 1000, reservationTtlMs: 600_000 };

/** A call that finds no room waits and asks again: soon at first, then less often (a settle frees room at any time). */
const FIRST_RETRY_MS = 5;
const LAST_RETRY_MS = 250;

export const tokensOf = (usage: Usage) => usage.total_tokens || usage.prompt_tokens + usage.completion_tokens + usage.reasoning_tokens;

/**
 * The token budgets a run is charged to (DESIGN §18, §21): before each model call, a reservation
 * of its prompt and the completion it may write on every budget, shared with every other call in
 * flight of those budgets (other DAG nodes, runs, interfaces); a call without room waits until one
 * settles, or until a dead worker's reservation expires; a spent budget ends the run. When the call
 * returns or is cut off, its reservation becomes its use. So a budget overshoots by at most one call.
 * A run without budgets makes no round trip here.
 */
export class RunBudget {
  constructor(
    private readonly ledger: BudgetLedger,
    private readonly refs: readonly BudgetRef[],
    private readonly settings: ReservationSettings,
  ) {}

  /** Whether the run has a budget (else reserving and settling cost nothing). */
  get active(): boolean {
    return this.refs.length > 0;
  }

  /**
   * Holds a reservation for a call of `promptTokens` writing at most `maxTokens`, waiting for room
   * (until `signal` aborts); throws BudgetSpent when a budget is spent, keeping `answerSoFar()`.
   */
  async reserve(promptTokens: number, maxTokens: number | undefined, signal: AbortSignal, answerSoFar: () => string | null): Promise<BudgetReservation | undefined> {
    if (!this.active) return undefined;
    const completion = Math.min(maxTokens ?? Infinity, this.settings.reserveCompletionTokens);
    const reservation = { callId: randomUUID(), tokens: Math.ceil(promptTokens + completion) };
    for (let delay = FIRST_RETRY_MS; ; delay = Math.min(delay * 2, LAST_RETRY_MS)) {
      const answer = await this.ledger.reserve(this.refs, reservation, this.settings.reservationTtlMs);
      if (answer.outcome === 'reserved') return reservation;
      if (answer.outcome === 'spent') throw spentFailure(answer.spent, answerSoFar());
      // Bounded: the calls in flight settle, or their reservations expire, and then this one starts or finds the budget spent.
      await sleep(delay, undefined, { signal });
    }
  }

  /** The call's reservation replaced by what it used (reported, or estimated when it was cut off). */
  async settle(reservation: BudgetReservation | undefined, usage: Usage): Promise<void> {
    if (!this.active || !reservation) return;
    await this.ledger.settle(this.refs, reservation, tokensOf(usage));
  }
}

function spentFailure({ ref, resetsAt }: SpentBudget, answerSoFar: string | null): BudgetSpent {
  return new BudgetSpent(`The ${whose(ref)}'s token budget of ${ref.limit} tokens per ${ref.period} is spent (it resets in ${secondsUntil(resetsAt)} s, at ${resetsAt.toISOString()}); the run made no further model call`, answerSoFar);
}
