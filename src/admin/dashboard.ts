import type { Middleware } from 'koa';
import getRawBody from 'raw-body';
import { SignJWT, jwtVerify } from 'jose';
import type { Queue } from 'bullmq';
import type { Authenticator, Principal } from '../auth/authenticator.js';
import { ADMIN, authorize } from '../auth/guard.js';
import type { CredentialCache } from '../auth/cache.js';
import { sessionRevoked } from '../auth/sessions.js';
import type { Models } from '../db/models.js';
import type { AuditLog } from '../audit/log.js';
import { actorOf, originOf } from '../auth/actor.js';
import type { DashboardSession, DashboardTickets } from './dashboard-tickets.js';
import type { AppContext, AppState } from '../http/context.js';
import { AppError, AuthError, RequestTimeoutError } from '../shared/errors.js';
import { boundedBodyRead } from '../http/body-guard.js';

/** Where the BullMQ dashboard (bull-board) is served, for a browser (DESIGN §9). */
export const DASHBOARD_PATH = '/admin/queues';
const COOKIE = 'ap_dashboard';
const SESSION_TTL_S = 15 * 60;
const AUDIENCE = 'agent-platform-dashboard';
const FORM_LIMIT_BYTES = 16 * 1024;

export interface DashboardDeps {
  authenticator: Authenticator;
  cache: CredentialCache;
  models: Models;
  audit: AuditLog;
  dashboardTickets: DashboardTickets;
  jwtSecret: string;
  issuer: string;
  /** BODY_IDLE_TIMEOUT_MS: the login form's body is given up when it stalls. */
  bodyIdleTimeoutMs: number;
  /**
   * Run jobs are read-only here (runs are cancelled through the API, which keeps the run protocol),
   * and so are webhook deliveries (redelivered through the API, under the same webhook-id); ingestion jobs may be retried.
   */
  runQueue: Queue;
  ingestQueue: Queue;
  webhookQueue: Queue;
  /** DESIGN §24: evals' driver jobs. */
  evalQueue: Queue;
}

/** The dashboard's mark (bull-board's own icons sit behind the session), so its sign-in page asks for no /favicon.ico. */
const ICON = `data:image/svg+xml,${encodeURIComponent('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#2f5bd3"/><path d="M4 5h8M4 8h8M4 11h5" stroke="#fff" stroke-width="1.6"/></svg>')}`;
const LOGIN_STYLE = `:root{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;font-size:15px;line-height:1.45;color:#1d1d22;background:#f7f7f8}
*{box-sizing:border-box}body{margin:0;min-height:100vh;display:grid;place-items:center;padding:16px}
main{background:#fff;border:1px solid #dcdce2;border-radius:6px;padding:28px;width:min(420px,100%)}
h1{font-size:1.4rem;margin:0 0 12px}a{color:#2f5bd3}label{display:block;font-weight:600;font-size:.9em}
input{display:block;width:100%;font:inherit;padding:7px 9px;margin:4px 0 12px;border:1px solid #dcdce2;border-radius:6px}
button{font:inherit;width:100%;padding:8px 14px;border-radius:6px;border:1px solid #2f5bd3;background:#2f5bd3;color:#fff;cursor:pointer}
h2{font-size:1.05rem;margin:20px 0 8px}.error{color:#b3261e;background:#fdecea;border:1px solid #f3c2bd;padding:8px 12px;border-radius:6px}
:focus-visible{outline:2px solid #2f5bd3;outline-offset:2px}`;

const LOGIN_PAGE = (message = '') => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex">
<title>Queue dashboard — sign in</title><link rel="icon" href="${ICON}"><style>${LOGIN_STYLE}</style></head>
<body><main><h1>Queue dashboard</h1>
${message ? `<p class="error" role="alert">${message}</p>` : ''}
<p>Open it from the console: sign in as an admin and choose <a href="/console#/chat">Administration → Queue dashboard</a>.
The session lasts ${SESSION_TTL_S / 60} minutes.</p>
<h2>Or sign in with a credential</h2>
<form method="post" action="${DASHBOARD_PATH}/login"><label>Credential (an admin's key with scope <code>admin</code>, or a token)<input type="password" name="token" autocomplete="off" required></label>
<button type="submit">Sign in</button></form><p>The credential is exchanged for a session cookie and not kept in the browser.</p></main></body></html>`;

const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
};

/**
 * The BullMQ dashboard behind an admin credential. A browser cannot send `Authorization`, so
 * `POST /admin/queues/login` (a form at GET) takes an admin's API key or access token once and
 * answers with a signed cookie (HttpOnly, SameSite=Strict, Path=/admin/queues, 15 minutes) naming
 * the admin and that credential; each later request re-checks both (disabled, demoted, revoked →
 * signed out). The console opens it without a pasted credential: a one-time ticket from
 * POST /api/admin/dashboard-ticket, posted by a same-origin form to `/admin/queues/enter`, gets the same cookie.
 * Changes made with the cookie must come from this origin (CSRF). Scripts may send `Authorization: Bearer` instead. bull-board's assets come from the
 * installed package; the one external stylesheet its page names (web fonts) is dropped.
 */
export function queueDashboard(deps: DashboardDeps): Middleware<AppState> {
  // bull-board (~0.1 CPU-second to import) loads with the dashboard's first page, not with every web process.
  let board: Promise<Middleware<AppState>> | undefined;
  const key = new TextEncoder().encode(`${deps.jwtSecret}:dashboard`);
  const inside = (path: string) => path === DASHBOARD_PATH || path.startsWith(`${DASHBOARD_PATH}/`);

  const sign = (session: DashboardSession) =>
    new SignJWT({ kind: session.kind, ref: session.ref })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(session.userId)
      .setIssuer(deps.issuer)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(`${SESSION_TTL_S}s`)
      .sign(key);

  async function fromCookie(ctx: AppContext): Promise<boolean> {
    const token = ctx.cookies.get(COOKIE);
    if (!token || token.length > 2048) return false;
    try {
      const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'], issuer: deps.issuer, audience: AUDIENCE, requiredClaims: ['sub', 'exp'] });
      return await stillAdmin(deps, { userId: String(payload.sub), kind: payload.kind === 'jwt' ? 'jwt' : 'api_key', ref: String(payload.ref) });
    } catch {
      return false;
    }
  }

  async function login(ctx: AppContext): Promise<void> {
    const token = await credentialFromForm(ctx, deps.bodyIdleTimeoutMs);
    let principal: Principal;
    try {
      principal = await deps.authenticator.authenticate(token);
    } catch (err) {
      if (!(err instanceof AuthError)) throw err;
      return loginPage(ctx, 401, 'That credential is not valid.');
    }
    try {
      authorize(principal, ADMIN);
    } catch {
      await deps.audit.record(actorOf(principal, ctx), { action: 'dashboard.login_refused', targetType: 'user', targetId: principal.user.id });
      return loginPage(ctx, 403, 'The queue dashboard needs an admin with full access or scope admin.');
    }
    await openSession(ctx, dashboardSessionOf(principal, token!));
    await deps.audit.record(actorOf(principal, ctx), { action: 'dashboard.login', targetType: 'user', targetId: principal.user.id });
  }

  /** The console's way in: a one-time ticket (POST /api/admin/dashboard-ticket), posted by a same-origin form. */
  async function enter(ctx: AppContext): Promise<void> {
    const session = await deps.dashboardTickets.redeem(await formField(ctx, 'ticket', deps.bodyIdleTimeoutMs));
    if (!session || !(await stillAdmin(deps, session))) return loginPage(ctx, 401, 'That link has been used or has expired. Open the dashboard again from the console.');
    await openSession(ctx, session);
    await deps.audit.record({ userId: session.userId, credential: session.kind === 'jwt' ? 'jwt' : 'api_key', ...originOf(ctx) }, { action: 'dashboard.login', targetType: 'user', targetId: session.userId });
  }

  async function openSession(ctx: AppContext, session: DashboardSession): Promise<void> {
    ctx.cookies.set(COOKIE, await sign(session), {
      httpOnly: true,
      sameSite: 'strict',
      path: DASHBOARD_PATH,
      maxAge: SESSION_TTL_S * 1000,
      // Secure whenever the request came over HTTPS (behind a proxy: X-Forwarded-Proto, with TRUST_PROXY_HOPS set).
      secure: ctx.secure,
      overwrite: true,
    });
    ctx.status = 303;
    ctx.redirect(`${DASHBOARD_PATH}/`);
  }

  return async (ctx, next) => {
    if (!inside(ctx.path)) return next();
    ctx.set(SECURITY_HEADERS);
    if (ctx.path === `${DASHBOARD_PATH}/login`) {
      if (ctx.method === 'POST') return login(ctx);
      if (ctx.method === 'GET' || ctx.method === 'HEAD') return loginPage(ctx, 200);
      throw new MethodNotAllowed(ctx.method);
    }
    if (ctx.path === `${DASHBOARD_PATH}/enter`) {
      if (ctx.method !== 'POST') throw new MethodNotAllowed(ctx.method, 'POST');
      if (!fromThisOrigin(ctx)) throw new CrossOrigin();
      return enter(ctx);
    }
    if (ctx.path === `${DASHBOARD_PATH}/logout` && ctx.method === 'POST') {
      ctx.cookies.set(COOKIE, null, { path: DASHBOARD_PATH });
      ctx.status = 303;
      return ctx.redirect(`${DASHBOARD_PATH}/login`);
    }
    const byCookie = !ctx.get('authorization');
    const allowed = byCookie ? await fromCookie(ctx) : await bearerIsAdmin(deps, ctx);
    if (!allowed) {
      const wantsPage = ctx.method === 'GET' && !ctx.path.startsWith(`${DASHBOARD_PATH}/api/`) && ctx.accepts('html') === 'html';
      if (wantsPage) {
        ctx.status = 303;
        return ctx.redirect(`${DASHBOARD_PATH}/login`);
      }
      throw new AuthError('unauthorized', `Sign in at ${DASHBOARD_PATH}/login with an admin credential`);
    }
    // SameSite=Strict keeps the cookie off other sites' requests; the Origin check also refuses a sibling site's (CSRF).
    if (byCookie && !SAFE_METHODS.has(ctx.method) && !fromThisOrigin(ctx)) throw new CrossOrigin();
    board ??= boardMiddleware(deps);
    await (await board)(ctx, next);
    // bull-board's router answers a method it lacks with a bare 405, or 501 for one it has never heard of.
    if (ctx.status === 501 || (ctx.status === 405 && ctx.body == null)) throw new MethodNotAllowed(ctx.method, ctx.response.get('Allow') || 'GET');
    if (typeof ctx.body === 'string' && ctx.response.is('html')) ctx.body = withoutExternalStyles(ctx.body);
  };
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The request was sent by a page of this origin. Browsers name the sender in Origin, except that a
 * page under `Referrer-Policy: no-referrer` (the console's and this dashboard's) sends `Origin: null`;
 * then Sec-Fetch-Site, which no page can set, must say same-origin. A request with neither is refused.
 */
function fromThisOrigin(ctx: AppContext): boolean {
  const origin = ctx.get('origin');
  // This server's origin, from its protocol and Host (X-Forwarded-* when TRUST_PROXY_HOPS is set).
  if (origin !== '' && origin !== 'null') return origin === `${ctx.protocol}://${ctx.host}`;
  return ctx.get('sec-fetch-site') === 'same-origin';
}

class CrossOrigin extends AppError {
  readonly status = 403;
  readonly code = 'cross_origin';
  constructor() {
    super('The queue dashboard takes changes only from pages of this origin (Origin, or Sec-Fetch-Site: same-origin)');
  }
}

class MethodNotAllowed extends AppError {
  readonly status = 405;
  readonly code = 'method_not_allowed';
  constructor(method: string, allowed = 'GET, HEAD, POST') {
    super(`${method} is not allowed here; allowed: ${allowed}`);
    this.headers = { Allow: allowed };
  }
}

function loginPage(ctx: AppContext, status: number, message?: string): void {
  ctx.status = status;
  ctx.type = 'html';
  ctx.body = LOGIN_PAGE(message);
}

/** The credential from the login form (urlencoded) or a JSON body `{token}`; bounded. */
function credentialFromForm(ctx: AppContext, idleMs: number): Promise<string | undefined> {
  return formField(ctx, 'token', idleMs);
}

/** One field of a small urlencoded form or JSON body; undefined when absent, empty, unreadable or too large. */
async function formField(ctx: AppContext, field: string, idleMs: number): Promise<string | undefined> {
  let text: string;
  try {
    const length = ctx.get('content-length') || undefined;
    text = await boundedBodyRead(ctx.req, idleMs, () => getRawBody(ctx.req, { limit: FORM_LIMIT_BYTES, encoding: 'utf8', length }));
  } catch (err) {
    if (err instanceof RequestTimeoutError) throw err;
    return undefined;
  }
  if (ctx.is('json')) {
    try {
      const value = (JSON.parse(text) as Record<string, unknown> | null)?.[field];
      return typeof value === 'string' && value ? value : undefined;
    } catch {
      return undefined;
    }
  }
  const value = new URLSearchParams(text).get(field)?.trim();
  return value || undefined;
}

async function bearerIsAdmin(deps: DashboardDeps, ctx: AppContext): Promise<boolean> {
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(ctx.get('authorization'));
  const principal = await deps.authenticator.authenticate(match?.[1]);
  authorize(principal, ADMIN);
  return true;
}

/** The dashboard session a verified admin credential opens: the key's id, or the access token's session. */
export function dashboardSessionOf(principal: Principal, token: string): DashboardSession {
  return { userId: principal.user.id, kind: principal.kind, ref: principal.kind === 'jwt' ? sessionOf(token) : principal.keyId! };
}

/** The session (`sid`) of an access token the authenticator has just verified. */
function sessionOf(token: string): string {
  const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { sid?: string };
  return String(payload.sid);
}

/** The admin and the credential that signed in are both still good: active admin; session not revoked, or key active, unexpired, still scoped for admin. */
async function stillAdmin(deps: DashboardDeps, session: DashboardSession): Promise<boolean> {
  const { cache, models } = deps;
  const user = await cache.fill(cache.users, session.userId, async () => await models.User.query().findById(session.userId));
  if (!user || !user.is_active || user.role !== 'admin') return false;
  if (session.kind === 'jwt') return !(await cache.fill(cache.sessions, session.ref, () => sessionRevoked(models, session.ref)));
  const key = await models.ApiKey.query().findById(session.ref);
  const scoped = key?.scopes === null || (key?.scopes ?? '').split(/[\s,]+/).includes('admin');
  return Boolean(key && key.user_id === user.id && key.is_active && (!key.expires_at || key.expires_at.getTime() > Date.now()) && scoped);
}

/** bull-board's page names a web-font stylesheet on a CDN; the dashboard works offline without it. */
function withoutExternalStyles(html: string): string {
  return html.replace(/<link[^>]+href="https?:\/\/[^"]*"[^>]*>/g, '');
}

async function boardMiddleware(deps: DashboardDeps): Promise<Middleware<AppState>> {
  const [{ createBullBoard }, { BullMQAdapter }, { KoaAdapter }] = await Promise.all([import('@bull-board/api'), import('@bull-board/api/bullMQAdapter'), import('@bull-board/koa')]);
  const adapter = new KoaAdapter();
  adapter.setBasePath(DASHBOARD_PATH);
  createBullBoard({
    queues: [new BullMQAdapter(deps.runQueue, { readOnlyMode: true }), new BullMQAdapter(deps.ingestQueue, { allowRetries: true }), new BullMQAdapter(deps.webhookQueue, { readOnlyMode: true }), new BullMQAdapter(deps.evalQueue, { readOnlyMode: true })],
    serverAdapter: adapter,
    options: { uiConfig: { boardTitle: 'agent-platform queues' } },
  });
  return adapter.registerPlugin() as unknown as Middleware<AppState>;
}
