import type { ChildProcess } from 'node:child_process';
import { alternatingRates, benchEnvironment, rateRow, round, runToEnd, runRateProcesses, stop } from './support.js';

/**
 * Budgets that hold (DESIGN §21), the benchmark's half of `npm run bench -- trust`, on a web and a
 * worker of its own with the local model (streaming a word every TOKEN_DELAY_MS):
 *
 * - overshoot: tokens over the limit of a small budget after 20 concurrent runs of one key, and
 *   after one DAG run of 8 parallel nodes on a 32-token budget, against the largest single model
 *   call (the bound DESIGN §21 promises: used ≤ limit + the largest single call);
 * - cost: completed runs/s at 20 clients of a key whose budget is never spent (every model call
 *   reserves and settles) against a key without one (no Redis call for budgets), alternating rounds.
 *   Target ≥ 0.95.
 */
const PORT = 3961;
const TOKEN_DELAY_MS = 2;
const CLIENTS = 20;
const ROUND_S = 6;
const ROUNDS = 4;
const NEVER_SPENT = { limit: 1_000_000_000_000, period: 'month' } as const;
const QUESTION = 'tell me about the weather';
const ANIMALS = ['cats', 'dogs', 'birds', 'fish', 'frogs', 'bees', 'ants', 'owls'];

type Bench = Awaited<ReturnType<typeof benchEnvironment>>;

async function budgetedKey(bench: Bench, userId: string, name: string, limit: number): Promise<string> {
  return (await bench.identity.apiKeys.create(userId, { name, token_budget: { limit, period: 'month' } })).key;
}

async function usedOf(url: string, key: string): Promise<number> {
  const res = await fetch(`${url}/api/me/api-keys`, { headers: { authorization: `Bearer ${key}` } });
  const { items } = (await res.json()) as { items: { token_usage: { used: number } | null }[] };
  return Math.max(...items.map((item) => item.token_usage?.used ?? 0));
}

interface Overshoot {
  limit: number;
  used: number;
  overshoot: number;
  'largest call': number;
  'bound held': boolean;
}

function overshootOf(limit: number, used: number, largest: number): Overshoot {
  return { limit, used, overshoot: Math.max(0, used - limit), 'largest call': largest, 'bound held': used <= limit + largest };
}

/** The tokens of one model call answering `q` (deterministic): a one-call ReAct run on a key without a budget. */
const oneCall = async (url: string, key: string, q: string) => (await runToEnd(url, key, 'react', { q })).totalTokens;

async function overshoots(bench: Bench, url: string, free: string): Promise<Record<string, Overshoot>> {
  const largestReact = await oneCall(url, free, QUESTION);
  const concurrentLimit = 2 * largestReact;
  const { user: racing } = await bench.user('racing@example.test');
  const racingKey = await budgetedKey(bench, racing.id, 'small budget', concurrentLimit);
  await Promise.all(Array.from({ length: 20 }, () => runToEnd(url, racingKey, 'react', { q: QUESTION })));

  const dagLimit = 32;
  const largestNode = Math.max(...(await Promise.all(ANIMALS.map((animal) => oneCall(url, free, animal)))));
  const { user: planner } = await bench.user('dag@example.test');
  const dagKey = await budgetedKey(bench, planner.id, '32 tokens', dagLimit);
  await runToEnd(url, dagKey, 'dag', { q: ANIMALS.join(' and ') });
  return {
    '20 concurrent runs, one key': overshootOf(concurrentLimit, await usedOf(url, racingKey), largestReact),
    'one 8-node DAG run': overshootOf(dagLimit, await usedOf(url, dagKey), largestNode),
  };
}

function runRates(url: string, variants: Record<string, string>) {
  const run = (key: string) => async () => {
    const { status } = await runToEnd(url, key, 'react', { q: 'hello' });
    if (status !== 'succeeded') throw new Error(status);
  };
  return alternatingRates(Object.fromEntries(Object.entries(variants).map(([name, key]) => [name, run(key)])), CLIENTS, ROUND_S, ROUNDS);
}

/** Prints the budget half of the trust benchmark: overshoot per budget, and what reservations cost. */
export async function budgetFigures(): Promise<void> {
  const bench = await benchEnvironment('trust_budgets');
  const started: ChildProcess[] = [];
  try {
    started.push(...(await runRateProcesses(bench.env, PORT, TOKEN_DELAY_MS)));
    const url = `http://127.0.0.1:${PORT}`;
    const { user } = await bench.user('budgets@example.test');
    const free = (await bench.identity.apiKeys.create(user.id, { name: 'no budget' })).key;
    const budgeted = await budgetedKey(bench, user.id, 'never spent', NEVER_SPENT.limit);

    console.log(`\nbudget overshoot (tokens over the limit), local model, one web + one worker\n`);
    console.table(await overshoots(bench, url, free));

    const names = { none: 'no budget', spent: 'budget (never spent), reservations on' };
    const rates = await runRates(url, { [names.none]: free, [names.spent]: budgeted });
    console.log(`\nbudget reservations: completed runs/s at ${CLIENTS} clients, ${ROUNDS} alternating rounds of ${ROUND_S} s\n`);
    console.table(Object.fromEntries(Object.entries(rates).map(([name, r]) => [name, rateRow(r)])));
    console.log(`runs/s with reservations / without = ${round(rates[names.spent]!.perSecond / rates[names.none]!.perSecond, 3)} (target ≥ 0.95)`);
  } finally {
    for (const child of started.reverse()) await stop(child);
    await bench.drop();
  }
}
