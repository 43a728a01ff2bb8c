import * as v from 'valibot';
import type { ApiKey, User } from '../db/models.js';
import { TokenBudgetSchema, type BudgetLedger, type BudgetRef, type TokenBudget, type TokenUsage } from '../budgets/ledger.js';
import { ValidationError, type ValidationIssue } from '../shared/errors.js';
import { rateLimitField } from './rate-limits.js';

/**
 * The limits a key or a user carries (DESIGN §18): `rate_limit_rpm` and `token_budget`, each null
 * for none. Owners set their keys' (create, PATCH); administrators any key's and users'. A user's
 * limits cap its keys: a key may not ask for more than its user allows.
 */

const PERIOD_WORDS = { day: 'daily', month: 'monthly' } as const;

/** A request field: `{limit, period}` or null (none). */
export const tokenBudgetField = v.nullable(
  v.pipe(TokenBudgetSchema, v.description('Model tokens per UTC calendar day or month: {limit (1–10^12), period: "day" | "month"}; null: none')),
);

/** The limit fields of a create or PATCH body (absent: unchanged; null: cleared). */
export const limitFields = {
  rate_limit_rpm: v.optional(rateLimitField),
  token_budget: v.optional(tokenBudgetField),
};

export interface LimitChanges {
  rate_limit_rpm?: number | null;
  token_budget?: TokenBudget | null;
}

/**
 * 422 when a key would allow more than its user: a `rate_limit_rpm` above the user's, or a
 * `token_budget` above the user's of the same period (a budget of the other period is a different
 * measure and is left to both to bind). Clearing a key's limit is always allowed: its user's then applies.
 */
export function checkKeyWithinUser(user: Pick<User, 'rate_limit_rpm' | 'token_budget'>, changes: LimitChanges): void {
  const issues: ValidationIssue[] = [];
  const rpm = changes.rate_limit_rpm;
  if (rpm != null && user.rate_limit_rpm != null && rpm > user.rate_limit_rpm) {
    issues.push({
      loc: ['body', 'rate_limit_rpm'],
      msg: `Input should be less than or equal to ${user.rate_limit_rpm}, the rate_limit_rpm of the key's user`,
      type: 'less_than_equal',
      input: rpm,
      ctx: { le: user.rate_limit_rpm },
    });
  }
  const budget = changes.token_budget;
  const cap = user.token_budget;
  if (budget && cap && budget.period === cap.period && budget.limit > cap.limit) {
    issues.push({
      loc: ['body', 'token_budget', 'limit'],
      msg: `Input should be less than or equal to ${cap.limit}, the ${PERIOD_WORDS[cap.period]} token_budget of the key's user`,
      type: 'less_than_equal',
      input: budget.limit,
      ctx: { le: cap.limit },
    });
  }
  if (issues.length) throw new ValidationError(issues);
}

/** Whether a change asks for a limit that its user's limits could refuse (so the user row must be read). */
export const asksForLimit = (changes: LimitChanges) => changes.rate_limit_rpm != null || changes.token_budget != null;

/** A key's or a user's budget as the ledger names it. */
export function budgetOf(scope: 'key' | 'user', row: ApiKey | User): BudgetRef | undefined {
  if (!row.token_budget) return undefined;
  const userId = scope === 'key' ? (row as ApiKey).user_id : row.id;
  return { scope, id: row.id, userId, limit: row.token_budget.limit, period: row.token_budget.period };
}

/** What a record shows as `token_usage`: the current period's use, or null without a budget. */
export async function tokenUsage(ledger: Pick<BudgetLedger, 'usage'>, scope: 'key' | 'user', row: ApiKey | User): Promise<TokenUsage | null> {
  const ref = budgetOf(scope, row);
  return ref ? ledger.usage(ref) : null;
}

/** The same as an audit entry's changes: each limit field that changed, before and after. */
export function limitChanges(before: LimitChanges, after: LimitChanges): Record<string, { from: unknown; to: unknown }> {
  const changed: Record<string, { from: unknown; to: unknown }> = {};
  for (const field of ['rate_limit_rpm', 'token_budget'] as const) {
    const from = before[field] ?? null;
    const to = after[field] ?? null;
    if (JSON.stringify(from) !== JSON.stringify(to)) changed[field] = { from, to };
  }
  return changed;
}
