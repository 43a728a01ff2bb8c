import * as v from 'valibot';
import { Reply, route, type Route } from '../auth/route.js';
import type { Services } from '../services.js';

const within = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms).unref())]);

async function check(probe: () => Promise<unknown>): Promise<string> {
  try {
    await within(probe(), 1500);
    return 'ok';
  } catch (err) {
    return err instanceof Error ? err.message : 'unreachable';
  }
}

const NOT_READY_RETRY_SECONDS = 5;

/** Probes: the process is up (`/healthz`), and Postgres and Redis answer (`/readyz`). No credential. */
export function healthRoutes({ knex, redis }: Services): Route[] {
  return [
    route({
      method: 'GET',
      path: '/healthz',
      summary: 'The process is up',
      auth: 'public',
      responses: { 200: v.strictObject({ status: v.literal('ok') }) },
      handle: () => ({ status: 'ok' }),
    }),
    route({
      method: 'GET',
      path: '/readyz',
      summary: 'Postgres and Redis answer (else 503)',
      auth: 'public',
      responses: { 200: v.strictObject({ status: v.literal('ready'), checks: v.strictObject({ postgres: v.literal('ok'), redis: v.literal('ok') }) }) },
      handle: async ({ ctx }) => {
        const [postgres, redisState] = await Promise.all([check(() => knex.raw('select 1')), check(() => redis.ping())]);
        const checks = { postgres, redis: redisState };
        if (postgres === 'ok' && redisState === 'ok') return { status: 'ready', checks };
        ctx.state.refusal = `not ready: postgres ${postgres}; redis ${redisState}`;
        return new Reply(503, { error: 'unavailable', message: 'A backing service is unreachable', checks }, { 'Retry-After': String(NOT_READY_RETRY_SECONDS) });
      },
    }),
  ];
}
