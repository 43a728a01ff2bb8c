import { secondsUntil, type BudgetLedger, type BudgetRef } from '../src/budgets/ledger.js';
import type { Usage } from '../src/shared/events.js';
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

/**
 * The token budgets a run is charged to (DESIGN §18): before each model call, a budget already
 * spent — by this run or any other of the same key or user — ends the run; after it, the call's
 * tokens are charged. So concurrent runs overshoot by at most one model call each.
 */
export class RunBudget {
  constructor(
    private readonly ledger: BudgetLedger,
    private readonly refs: readonly BudgetRef[],
  ) {}

  /** Throws BudgetSpent when a budget is spent; `answerSoFar` is kept as the failed run's answer. */
  async ensureRoom(answerSoFar: string | null): Promise<void> {
    if (this.refs.length === 0) return;
    const spent = await this.ledger.spent(this.refs);
    if (!spent) return;
    const { ref, resetsAt } = spent;
    throw new BudgetSpent(`The ${whose(ref)}'s token budget of ${ref.limit} tokens per ${ref.period} is spent (it resets in ${secondsUntil(resetsAt)} s, at ${resetsAt.toISOString()}); the run made no further model call`, answerSoFar);
  }

  async charge(usage: Usage): Promise<void> {
    if (this.refs.length === 0) return;
    const tokens = usage.total_tokens || usage.prompt_tokens + usage.completion_tokens + usage.reasoning_tokens;
    await this.ledger.charge(this.refs, tokens);
  }
}
