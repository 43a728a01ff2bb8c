import Router from '@koa/router';
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

export function healthRoutes({ knex, redis }: Services): Router {
  const router = new Router();
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    const [postgres, redisState] = await Promise.all([check(() => knex.raw('select 1')), check(() => redis.ping())]);
    const ready = postgres === 'ok' && redisState === 'ok';
    ctx.status = ready ? 200 : 503;
    ctx.body = ready
      ? { status: 'ready', checks: { postgres, redis: redisState } }
      : { error: 'unavailable', message: 'A backing service is unreachable', checks: { postgres, redis: redisState } };
  });
  return router;
}
