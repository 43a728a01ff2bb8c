import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { BudgetLedger, type BudgetRef, type BudgetReservation } from '../src/budgets/ledger.js';
import { createRedis } from '../src/redis/connection.js';
import { deleteKeysWithPrefix, redisKeys, type ScriptedRedis } from '../src/shared/redis-keys.js';
import { BudgetSpent, RunBudget } from '../workers/runs/run-budget.js';
import { uniqueId } from './support/app.js';
import { eventually } from './support/eventually.js';

/**
 * Budget reservations (DESIGN §21) against the real Redis: reserveBudgets-4.lua and
 * settleBudgets-4.lua's outcomes, one ledger standing in for every worker, and RunBudget's wait.
 */
const keyPrefix = `${inject('redisPrefix')}${uniqueId()}:`;
let redis: ScriptedRedis;
let ledger: BudgetLedger;
const TTL_MS = 60_000;

beforeAll(() => {
  const config = { url: inject('redisUrl'), tlsRejectUnauthorized: false, keyPrefix, clusterNodes: [] };
  redis = createRedis(config, 'patient', 'test-budget-reservations');
  ledger = new BudgetLedger(redis, redisKeys(config));
});
afterAll(async () => {
  await deleteKeysWithPrefix(redis, keyPrefix);
  redis.disconnect();
});

function budgetOf(limit: number, scope: 'user' | 'key' = 'key', userId = randomUUID()): BudgetRef {
  return { limit, period: 'day', scope, id: scope === 'user' ? userId : randomUUID(), userId };
}
const call = (tokens: number): BudgetReservation => ({ callId: randomUUID(), tokens });
const used = async (ref: BudgetRef) => (await ledger.usage(ref)).used;

describe('reserveBudgets and settleBudgets', () => {
  it('a call starts while used + held + its own fit; else it waits while others are in flight; a settle replaces the hold by the use', async () => {
    const budget = budgetOf(100);
    const first = call(60);
    expect(await ledger.reserve([budget], first, TTL_MS)).toEqual({ outcome: 'reserved' });
    const second = call(60);
    expect(await ledger.reserve([budget], second, TTL_MS)).toEqual({ outcome: 'wait' });
    expect(await ledger.settle([budget], first, 30)).toBe(false);
    expect(await used(budget)).toBe(30);
    expect(await ledger.reserve([budget], second, TTL_MS)).toEqual({ outcome: 'reserved' });
    const third = call(50);
    expect(await ledger.reserve([budget], third, TTL_MS)).toEqual({ outcome: 'wait' });
    expect(await ledger.settle([budget], second, 80)).toBe(true);
    const spent = await ledger.reserve([budget], third, TTL_MS);
    expect(spent).toMatchObject({ outcome: 'spent', spent: { ref: budget } });
    expect(await used(budget)).toBe(110);
  });

  it('with nothing else in flight a call starts while used < limit, even one larger than what is left', async () => {
    const budget = budgetOf(10);
    const big = call(1000);
    expect(await ledger.reserve([budget], big, TTL_MS)).toEqual({ outcome: 'reserved' });
    expect(await ledger.settle([budget], big, 9)).toBe(false);
    const next = call(1000);
    expect(await ledger.reserve([budget], next, TTL_MS)).toEqual({ outcome: 'reserved' });
    expect(await ledger.settle([budget], next, 5)).toBe(true);
    expect(await ledger.reserve([budget], call(1), TTL_MS)).toMatchObject({ outcome: 'spent' });
  });

  it("a key's and its user's budgets are reserved together: either one spent, or busy, holds the call", async () => {
    const user = budgetOf(50, 'user');
    const key = budgetOf(1_000_000, 'key', user.userId);
    const first = call(40);
    expect(await ledger.reserve([key, user], first, TTL_MS)).toEqual({ outcome: 'reserved' });
    // Another key of the same user shares the user's budget.
    const otherKey = budgetOf(1_000_000, 'key', user.userId);
    expect(await ledger.reserve([otherKey, user], call(40), TTL_MS)).toEqual({ outcome: 'wait' });
    expect(await ledger.settle([key, user], first, 60)).toBe(true);
    expect(await ledger.reserve([otherKey, user], call(1), TTL_MS)).toMatchObject({ outcome: 'spent', spent: { ref: user } });
    expect(await used(key)).toBe(60);
    expect(await used(otherKey)).toBe(0);
  });

  it('a reservation past its expiry (its worker died) is charged, and a settle that comes after charges only what the call used beyond it', async () => {
    const budget = budgetOf(1_000_000);
    const stale = call(50);
    expect(await ledger.reserve([budget], stale, 1)).toEqual({ outcome: 'reserved' });
    // Any later reservation of the budget prunes the expired one into a charge.
    await eventually(async () => (await ledger.reserve([budget], call(0), TTL_MS)).outcome === 'reserved' && (await used(budget)) === 50, 'the expired reservation charged');
    expect(await ledger.settle([budget], stale, 70)).toBe(false);
    expect(await used(budget)).toBe(70);
  });
});

describe('RunBudget', () => {
  const settings = { reserveCompletionTokens: 1000, reservationTtlMs: TTL_MS };

  it("a reservation left by a killed worker holds the budget only until it expires; then it is charged and the next call starts", async () => {
    const budget = budgetOf(100);
    // The dead worker's call: reserved, never settled.
    expect(await ledger.reserve([budget], call(40), 300)).toEqual({ outcome: 'reserved' });
    const run = new RunBudget(ledger, [budget], settings);
    const reservation = await run.reserve(10, undefined, AbortSignal.timeout(15_000), () => null);
    expect(reservation?.tokens).toBe(1010);
    expect(await used(budget)).toBe(40);
    await run.settle(reservation, { prompt_tokens: 10, completion_tokens: 5, reasoning_tokens: 0, total_tokens: 15 });
    expect(await used(budget)).toBe(55);
  });

  it('a waiting call wakes when the call in flight settles, and ends the run if that spent the budget, keeping the answer so far', async () => {
    const budget = budgetOf(80);
    const run = new RunBudget(ledger, [budget], { ...settings, reserveCompletionTokens: 50 });
    const first = await run.reserve(10, undefined, AbortSignal.timeout(15_000), () => null);
    let answer: string | null = null;
    const second = run.reserve(10, 20, AbortSignal.timeout(15_000), () => answer).catch((err: unknown) => err);
    // The second waits (60 + 30 > 80 with the first in flight) until the first settles with 120 tokens.
    answer = 'the first answer';
    await run.settle(first, { prompt_tokens: 10, completion_tokens: 110, reasoning_tokens: 0, total_tokens: 120 });
    const failure = await second;
    expect(failure).toBeInstanceOf(BudgetSpent);
    expect((failure as BudgetSpent).answerSoFar).toBe('the first answer');
    expect(first?.tokens).toBe(60);
  });

  it('a run without budgets reserves nothing', async () => {
    const run = new RunBudget(ledger, [], settings);
    expect(run.active).toBe(false);
    expect(await run.reserve(10, undefined, new AbortController().signal, () => null)).toBeUndefined();
  });
});
