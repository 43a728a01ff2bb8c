import { randomUUID } from 'node:crypto';
import type Koa from 'koa';
import type { Context, Middleware } from 'koa';
import type { AppState } from '../http/context.js';
import type Router from '@koa/router';
import type { Logger } from 'pino';
import { AppError, MethodNotAllowedError, NotFoundError, RateLimitedError, UnavailableError } from '../shared/errors.js';
import { classifyDependencyFailure } from '../shared/outage.js';
import { openAiErrorBody, speaksOpenAi } from './openai-errors.js';
import { REQUEST_ID as SAFE_REQUEST_ID } from '../shared/jobs.js';

/** How soon a client may retry after the web tier was too busy, and after a dependency was unreachable. */
const SATURATED_RETRY_SECONDS = 1;
const UNREACHABLE_RETRY_SECONDS = 5;

/** Node's codes for a peer that closed the connection, or a response stream ended because it did. */
const CLIENT_GONE_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE', 'ERR_STREAM_DESTROYED', 'ERR_STREAM_WRITE_AFTER_END']);

/** Whether an error only says the client went away (closed the tab, cancelled a download): routine, not a fault of ours. */
export function isClientGone(err: unknown): boolean {
  for (let cause = err, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    const { code, type } = cause as { code?: string; type?: string };
    if ((code && CLIENT_GONE_CODES.has(code)) || type === 'request.aborted' || cause.message === 'aborted') return true;
  }
  return false;
}

/** An error after the response started: a client that went away at info without a stack; anything else as a warning with it. */
function logAfterStart(log: Logger, err: unknown): void {
  if (isClientGone(err)) log.info({ code: (err as { code?: string }).code ?? 'aborted' }, 'client went away before the response ended');
  else log.warn({ err }, 'error after response started');
}

/**
 * The logger of one request: the root's child with its request id, whose own children (a run's ids,
 * added once the run exists) are children of the root too, with the request id among their bindings.
 * A child of the request's logger would make that logger a prototype, which V8 gives maps of its
 * own, and keep it alive beside its child as long as the request's stream: most of the ~1.2 KiB the
 * two loggers held per open stream. The lines read the same either way.
 */
export function requestLogger(root: Logger, requestId: string): Logger {
  const log = root.child({ request_id: requestId });
  log.child = ((bindings, options) => root.child({ request_id: requestId, ...bindings }, options)) as Logger['child'];
  return log;
}

/** Request id (kept from X-Request-Id when sane) and one log line per request. Never logs headers or bodies. */
export function requestContext(logger: Logger): Middleware<AppState> {
  return async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const requestId = SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.state.log = requestLogger(logger, requestId);
    ctx.set('X-Request-Id', requestId);
    const started = performance.now();
    try {
      await next();
    } finally {
      const { log } = ctx.state;
      const line = { method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(performance.now() - started) };
      // Every 429 and 503 names its cause (DESIGN §12), so overload is never mistaken for an outage.
      if (ctx.state.refusal) log.warn({ ...line, cause: ctx.state.refusal }, 'request refused');
      else log.info(line, 'request');
    }
  };
}

/** Headers every response carries (DESIGN §12): nothing is cached (responses carry credentials and user data), nothing sniffed. */
export function securityHeaders(): Middleware<AppState> {
  return async (ctx, next) => {
    ctx.set({ 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-store' });
    await next();
  };
}

/**
 * A request answered before its body was read whole (refused credential, 413 from Content-Length,
 * idle body, no route) closes its connection once answered (DESIGN §21): draining a body nobody
 * wants would let a client that announced 20 MB hold the web as long as it likes.
 */
export function closeUnreadBodies(): Middleware<AppState> {
  return async (ctx, next) => {
    await next();
    if (!ctx.req.complete && !ctx.headerSent && ctx.respond !== false) ctx.set('Connection', 'close');
  };
}

const HTTP_CODES: Record<number, string> = { 400: 'bad_request', 405: 'method_not_allowed' };

/** A Postgres or Redis failure as the client should see it: saturation → 429, unreachable → 503, both with Retry-After. */
function dependencyError(caught: unknown): unknown {
  const failure = classifyDependencyFailure(caught);
  if (!failure) return caught;
  const cause = `${failure.dependency} ${failure.kind}: ${failure.cause}`;
  if (failure.kind === 'saturated') {
    return new RateLimitedError('The service is busy; retry after the time in Retry-After', SATURATED_RETRY_SECONDS, cause);
  }
  return new UnavailableError('A backing service (Postgres or Redis) is unavailable; retry shortly', UNREACHABLE_RETRY_SECONDS, cause);
}

/** The one place errors become HTTP responses (DESIGN §4). */
export function errorResponses(): Middleware<AppState> {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw new NotFoundError(`No route for ${ctx.method} ${ctx.path}`);
    } catch (caught) {
      const err = dependencyError(caught);
      if (err instanceof AppError && err.logCause) ctx.state.refusal = err.logCause;
      if (ctx.headerSent) {
        logAfterStart(ctx.state.log, err);
        return;
      }
      if (err instanceof AppError) {
        ctx.set(err.headers);
        answer(ctx, err.status, err.body());
        return;
      }
      const status = (err as { status?: number; expose?: boolean }).status;
      if (status && status >= 400 && status < 500 && (err as { expose?: boolean }).expose) {
        answer(ctx, status, { error: HTTP_CODES[status] ?? 'bad_request', message: (err as Error).message });
        return;
      }
      ctx.state.log.error({ err }, 'unhandled error');
      answer(ctx, 500, internalErrorBody(ctx));
    }
  };
}

/** An error's status and body, in the dialect of the path (OpenAI's on /v1/*, DESIGN §16). */
function answer(ctx: Context, status: number, body: Record<string, unknown>): void {
  ctx.status = status;
  ctx.body = speaksOpenAi(ctx.path) ? openAiErrorBody(status, body) : body;
}

const internalErrorBody = (ctx: Context) => ({ error: 'internal_error', message: 'Internal server error', request_id: ctx.state.requestId ?? null });

/**
 * A path some route serves, asked with a method none of them implements (PROPFIND, TRACE, or PUT
 * where only GET exists) → 405 with Allow; OPTIONS → 204 with Allow. Paths no route serves stay 404.
 */
export function methodsAllowed(routers: Router[]): Middleware<AppState> {
  const layers = routers.flatMap((router) => router.stack).filter((layer) => layer.methods.length > 0);
  return async (ctx, next) => {
    await next();
    if (ctx.status !== 404 || ctx.body !== undefined) return;
    const allowed = [...new Set(layers.filter((layer) => layer.match(ctx.path)).flatMap((layer) => layer.methods))];
    if (allowed.length === 0) return;
    allowed.push('OPTIONS');
    if (ctx.method === 'OPTIONS') {
      ctx.status = 204;
      ctx.set('Allow', allowed.join(', '));
      return;
    }
    throw new MethodNotAllowedError(ctx.method, ctx.path, allowed);
  };
}

/**
 * Koa's last resort (an error while writing the response, e.g. a body that cannot be serialised)
 * answers plain text; this one answers DESIGN §4's JSON instead.
 */
export function jsonLastResort(app: Koa, logger: Logger): void {
  app.context.onerror = function onerror(this: Context, err: unknown) {
    if (err == null) return;
    const log = (this.state?.log as Logger | undefined) ?? logger;
    if (this.headerSent || !this.writable) {
      logAfterStart(log, err);
      return;
    }
    log.error({ err }, 'unhandled error while responding');
    const { res } = this;
    for (const name of res.getHeaderNames()) res.removeHeader(name);
    const body = JSON.stringify(speaksOpenAi(this.path) ? openAiErrorBody(500, internalErrorBody(this)) : internalErrorBody(this));
    res.statusCode = 500;
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', Buffer.byteLength(body));
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Cache-Control', 'no-store');
    if (this.state?.requestId) res.setHeader('X-Request-Id', String(this.state.requestId));
    res.end(body);
  };
}
