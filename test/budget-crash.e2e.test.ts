import { describe, expect, it } from 'vitest';
import { killAtFirstToken, startStack } from './support/stack.js';
import { ofType, stream } from './support/sse.js';

/**
 * Budget reservations of a dead worker (DESIGN §21) on a web + worker stack whose reservations live
 * 1 s: the worker is killed mid-answer, so its model call's reservation is never settled; the
 * resumed run waits only until it expires, and it is charged.
 */
describe('a dead worker', () => {
  it("a reservation left by a killed worker holds the budget only until it expires, and is then charged", async () => {
    // Reservations live 1 s here; each call reserves its prompt and 1,000 completion tokens, so two never fit in 1,500.
    const crashing = await startStack({ workers: 1, env: { LOCAL_MODEL_TOKEN_DELAY_MS: '10', BUDGET_RESERVATION_TTL_S: '1' } });
    try {
      const { key } = await crashing.user();
      const keyId = (await crashing.api(key, 'GET', '/api/me/api-keys')).body.items[0].id as string;
      await crashing.api(key, 'PATCH', `/api/me/api-keys/${keyId}`, { token_budget: { limit: 1500, period: 'day' } });
      const kill = killAtFirstToken(crashing.workers[0]!);
      const first = await stream(`${crashing.url}/api/react`, { token: key, body: { q: 'hello there' }, ...kill });
      expect(first, JSON.stringify({ status: first.status, body: first.body, events: first.events.length })).toMatchObject({ status: 200, interrupted: true });
      const runId = first.headers.get('x-run-id')!;
      await crashing.startWorker();
      const rest = await stream(`${crashing.url}/api/runs/${runId}/events`, { method: 'GET', token: key, headers: { 'Last-Event-ID': first.events.at(-1)!.id } });
      const done = ofType(rest.events, 'done')[0]!.data;
      // The resumed call waited for the dead one's reservation to expire, and then ran.
      expect(done.status).toBe('succeeded');
      const used = (await crashing.api(key, 'GET', '/api/me/api-keys')).body.items[0].token_usage.used as number;
      // Charged: the resumed run's calls and the dead call's whole reservation (its prompt and 1,000 tokens).
      expect(used).toBeGreaterThanOrEqual(done.usage.total_tokens + 1000);
    } finally {
      await crashing.stop();
    }
  }, 120_000);
});
