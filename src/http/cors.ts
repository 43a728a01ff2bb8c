import cors from '@koa/cors';
import type { Middleware } from 'koa';

/** DESIGN §12: what a browser app may send (a credential, JSON, a resume point, its own request id) and read. */
/** Mcp-Protocol-Version: what a browser MCP client sends after initialize (DESIGN §16). */
export const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Last-Event-ID', 'X-Request-Id', 'Mcp-Protocol-Version'];
/** RateLimit, RateLimit-Policy: a limited credential's quota (DESIGN §18), so a page can pace itself. */
export const CORS_EXPOSED_HEADERS = ['X-Run-Id', 'X-Conversation-Id', 'X-Request-Id', 'Retry-After', 'RateLimit', 'RateLimit-Policy'];
const CORS_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
/** Browsers cache a preflight this long (Chromium caps it at 2 h), so a streaming page pays it once. */
const PREFLIGHT_MAX_AGE_S = 600;

/**
 * CORS for the origins of CORS_ORIGINS; none → undefined (no CORS headers at all). An origin not
 * listed gets none either, so the browser refuses the response. Preflights of listed origins are
 * answered here, before routing, so every route (streams included) can be preflighted.
 */
export function corsFor(origins: string[]): Middleware | undefined {
  if (origins.length === 0) return undefined;
  const allowed = new Set(origins);
  return cors({
    origin: (ctx) => {
      const origin = ctx.get('Origin');
      return allowed.has(origin) ? origin : '';
    },
    allowMethods: CORS_METHODS,
    allowHeaders: CORS_ALLOWED_HEADERS,
    exposeHeaders: CORS_EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE_S,
  });
}
