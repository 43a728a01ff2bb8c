import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { AppError, NotFoundError, UnavailableError } from './errors.js';
import { isDependencyOutage } from './outage.js';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** Request id (kept from X-Request-Id when sane) and one log line per request. Never logs headers or bodies. */
export function requestContext(logger: Logger): Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const requestId = SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.state.log = logger.child({ request_id: requestId });
    ctx.set('X-Request-Id', requestId);
    const started = performance.now();
    try {
      await next();
    } finally {
      const log = ctx.state.log as Logger;
      log.info({ method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(performance.now() - started) }, 'request');
    }
  };
}

const HTTP_CODES: Record<number, string> = { 400: 'bad_request', 405: 'method_not_allowed', 501: 'not_implemented' };

/** The one place errors become HTTP responses (DESIGN §4). */
export function errorResponses(): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw new NotFoundError(`No route for ${ctx.method} ${ctx.path}`);
    } catch (caught) {
      const err = isDependencyOutage(caught) ? new UnavailableError('A backing service (Postgres or Redis) is unavailable; retry shortly') : caught;
      if (ctx.headerSent) {
        (ctx.state.log as Logger).warn({ err }, 'error after response started');
        return;
      }
      if (err instanceof AppError) {
        ctx.status = err.status;
        ctx.set(err.headers);
        ctx.body = err.body();
        return;
      }
      const status = (err as { status?: number; expose?: boolean }).status;
      if (status && status >= 400 && status < 500 && (err as { expose?: boolean }).expose) {
        ctx.status = status;
        ctx.body = { error: HTTP_CODES[status] ?? 'bad_request', message: (err as Error).message };
        return;
      }
      (ctx.state.log as Logger).error({ err }, 'unhandled error');
      ctx.status = 500;
      ctx.body = { error: 'internal_error', message: 'Internal server error', request_id: ctx.state.requestId };
    }
  };
}
