import * as v from 'valibot';

/** The terms of a token budget (DESIGN §18), as records, jobs and requests carry them; src/budgets/ledger.ts keeps the counts. */

export const BUDGET_PERIODS = ['day', 'month'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];
/** The most tokens a budget may allow: beyond any period's use, within a safe integer after a call's charge. */
export const MAX_BUDGET_TOKENS = 1_000_000_000_000;

export const TokenBudgetSchema = v.strictObject({
  limit: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(MAX_BUDGET_TOKENS)),
  period: v.picklist(BUDGET_PERIODS),
});
export type TokenBudget = v.InferOutput<typeof TokenBudgetSchema>;

/** A budget that applies to a run: whose it is (a user's, or one of its API keys') and its terms. Carried in the run's job. */
export const BudgetRefSchema = v.object({
  ...TokenBudgetSchema.entries,
  scope: v.picklist(['user', 'key']),
  /** The user's or the key's id. */
  id: v.pipe(v.string(), v.uuid()),
  userId: v.pipe(v.string(), v.uuid()),
});
export type BudgetRef = v.InferOutput<typeof BudgetRefSchema>;

/** What a record shows of its budget (`token_usage`). */
export interface TokenUsage {
  used: number;
  period_start: string;
  resets_at: string;
}
