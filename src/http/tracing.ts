import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes } from '@opentelemetry/api';
import type { Middleware } from 'koa';
import type { AppState } from '../http/context.js';
import { TRACER_NAME } from '../telemetry/propagation.js';

/** Methods the HTTP semantic conventions name as they are; any other is `_OTHER` (and the span is just `HTTP`). */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE']);

/**
 * One SERVER span per request (DESIGN §18), named `<METHOD> <route>` (`POST /api/react`) once the
 * router has matched, with the stable HTTP semantic-convention attributes. An incoming W3C
 * `traceparent` is its parent; a malformed one is ignored (the request starts a trace of its own).
 * The span is the active context while the request is handled, so a run started by it carries its
 * trace to the worker (src/runs/service.ts). Mounted only when tracing is on; a stream's span ends
 * with its headers, as its request-duration metric does.
 */
export function traceRequests(): Middleware<AppState> {
  const tracer = trace.getTracer(TRACER_NAME);
  return async (ctx, next) => {
    const parent = propagation.extract(ROOT_CONTEXT, ctx.headers);
    const known = METHODS.has(ctx.method);
    const attributes: Attributes = {
      'http.request.method': known ? ctx.method : '_OTHER',
      'url.path': ctx.path,
      'url.scheme': ctx.protocol,
      'network.protocol.version': ctx.req.httpVersion,
      'client.address': ctx.ip,
    };
    if (!known) attributes['http.request.method_original'] = ctx.method.slice(0, 64);
    const host = ctx.hostname;
    if (host) attributes['server.address'] = host;
    const agent = ctx.get('user-agent');
    if (agent) attributes['user_agent.original'] = agent.slice(0, 512);
    const span = tracer.startSpan(known ? ctx.method : 'HTTP', { kind: SpanKind.SERVER, attributes }, parent);
    try {
      await context.with(trace.setSpan(parent, span), next);
    } catch (err) {
      // Errors become responses further in (errorResponses); one that escapes is Koa's to answer with a 500.
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.setAttribute('error.type', (err as Error)?.constructor?.name || '_OTHER');
      throw err;
    } finally {
      const route = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
      if (route !== undefined) {
        span.setAttribute('http.route', String(route));
        span.updateName(`${known ? ctx.method : 'HTTP'} ${String(route)}`);
      }
      const status = ctx.status;
      span.setAttribute('http.response.status_code', status);
      if (ctx.state.requestId) span.setAttribute('agent_platform.request.id', ctx.state.requestId);
      // Server spans: a 4xx is the client's error, not the server's (HTTP semantic conventions).
      if (status >= 500) {
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.setAttribute('error.type', String(status));
      }
      span.end();
    }
  };
}
