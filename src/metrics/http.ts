import Koa, { type Middleware } from 'koa';
import Router from '@koa/router';
import type { Logger } from 'pino';
import { mountRoutes, Reply, route, type AppState, type Route } from '../auth/route.js';
import type { Authenticator } from '../auth/authenticator.js';
import { ADMIN, authorize, credentialOf } from '../auth/guard.js';
import { constantTimeEqual, sha256Hex } from '../auth/secrets.js';
import { AuthError } from '../shared/errors.js';
import { errorResponses, jsonLastResort, methodsAllowed, requestContext, securityHeaders } from '../http/middleware.js';
import type { Metrics } from './registry.js';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** Requests no declared route served (404s, 405s, preflights, the queue dashboard's pages). */
const UNMATCHED = '(unmatched)';

/**
 * Times every request under its declared route pattern (`/api/runs/:id`), never its raw path, so
 * the series stay as few as the routes; a stream is timed to its headers (its handler's return).
 */
export function requestMetrics(metrics: Metrics): Middleware<AppState> {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const matched = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
      const labels = { route: matched === undefined ? UNMATCHED : String(matched), method: METHODS.has(ctx.method) ? ctx.method : 'other', status: String(ctx.status) };
      metrics.httpDuration.observe(labels, (performance.now() - started) / 1000);
    }
  };
}

/** Who may scrape (DESIGN §12): the METRICS_TOKEN bearer when one is set, else an admin credential. */
export type ScrapeGuard = (ctx: Koa.ParameterizedContext<AppState>) => Promise<void>;

export function scrapeGuard(token: string | undefined, authenticator: Authenticator): ScrapeGuard {
  // Hashing both sides gives equal lengths, so the comparison's time says nothing about the token.
  const expected = token === undefined ? undefined : sha256Hex(token);
  return async (ctx) => {
    const credential = credentialOf(ctx, {});
    if (expected === undefined) {
      authorize(await authenticator.authenticate(credential), ADMIN);
      return;
    }
    if (!credential) throw new AuthError('unauthorized', 'Missing credentials: send Authorization: Bearer <METRICS_TOKEN>');
    if (!constantTimeEqual(sha256Hex(credential), expected)) throw new AuthError('invalid_token', 'The metrics token is not valid');
  };
}

/** `GET /metrics`: the process's registry in Prometheus text format, declared like every route (in the document too). */
export function metricsRoute(metrics: Metrics, guard: ScrapeGuard): Route {
  return route({
    method: 'GET',
    path: '/metrics',
    summary: 'Prometheus metrics of this process (METRICS_TOKEN bearer when set, else an admin credential)',
    // The guard is the scrape rule of DESIGN §12, not a scope: the handler applies it.
    auth: 'public',
    responses: { 200: { mediaType: 'text/plain', description: 'Prometheus text exposition format' } },
    errors: [401, 403],
    handle: async ({ ctx }) => {
      await guard(ctx);
      return new Reply(200, await metrics.scrape(), { 'Content-Type': metrics.contentType });
    },
  });
}

/** The worker's metrics server (WORKER_METRICS_PORT): the same endpoint, guard and error bodies as the web's. */
export function metricsApp(metrics: Metrics, guard: ScrapeGuard, authenticator: Authenticator, logger: Logger): Koa<AppState> {
  const app = new Koa<AppState>();
  app.silent = true;
  jsonLastResort(app, logger);
  const router = mountRoutes([metricsRoute(metrics, guard)], authenticator);
  app.use(requestContext(logger));
  app.use(securityHeaders());
  app.use(errorResponses());
  app.use(methodsAllowed([router as unknown as Router]));
  app.use(router.routes());
  return app;
}
