import Router from '@koa/router';
import type { Context } from 'koa';
import type * as v from 'valibot';
import type { Authenticator, Principal } from './authenticator.js';
import { authorize, credentialOf, type AccessRule } from './guard.js';
import { parseInput } from '../http/validation.js';
import { Reply, type AppContext, type AppState, type BodyReader, type Method, type Responses } from '../http/context.js';

export { Reply, type AppContext, type AppState, type BodyReader, type MediaResponse, type Method, type Responses } from '../http/context.js';
import type { RateLimiter } from '../limits/rate-limits.js';

/** Who may call a route: `public`, or the guard rule a credential must satisfy (DESIGN §3). */
export type Access = AccessRule | 'public';

type Schema = v.GenericSchema;
type Out<S> = S extends Schema ? v.InferOutput<S> : undefined;

export interface RouteInput<A extends Access, P, Q, H, B> {
  params: Out<P>;
  query: Out<Q>;
  headers: Out<H>;
  body: Out<B>;
  principal: A extends 'public' ? undefined : Principal;
  ctx: AppContext;
}

/**
 * One declaration per route (DESIGN §12): method, path, who may call it, the schemas of its
 * path, query, headers and JSON body, and its handler. Registration, validation and auth are
 * derived from it, in that order: credential → path → query → headers → body.
 */
export interface RouteSpec<A extends Access, P, Q, H, B> {
  method: Method;
  /** Koa path syntax: `/api/agents/:id`. */
  path: string;
  summary: string;
  auth: A;
  params?: P;
  query?: Q;
  headers?: H;
  body?: B;
  /** The usual success status (200 unless said). */
  status?: number;
  /** The handler may write the response itself (a server-sent-events stream): it then returns nothing. */
  streams?: boolean;
  /** Left out of the OpenAPI document: the OpenAI-compatible endpoints follow OpenAI's published contract instead (DESIGN §16). */
  undocumented?: boolean;
  /** The handler reads the request body itself (multipart uploads); `body` then describes its JSON form only. */
  readsBody?: boolean;
  /** The handler takes a multipart/form-data upload of one file (`file`, optional `name`), beside the JSON `body` if one is declared. */
  upload?: boolean;
  /** Its success answers (DESIGN §12). */
  responses: Responses;
  /** Headers its success answers carry, by name, with what they hold. */
  responseHeaders?: Record<string, string>;
  /**
   * The error statuses the handler itself answers (404, 409, …). Those the declaration implies
   * (credential → 401/403, inputs → 422, a body → 413/415) and those any request may meet are
   * added by the document (src/routes/openapi.ts).
   */
  errors?: number[];
  handle(input: RouteInput<A, P, Q, H, B>): unknown;
}

export type Route = RouteSpec<Access, Schema | undefined, Schema | undefined, Schema | undefined, Schema | undefined>;

export function route<A extends Access, P extends Schema | undefined = undefined, Q extends Schema | undefined = undefined, H extends Schema | undefined = undefined, B extends Schema | undefined = undefined>(
  spec: RouteSpec<A, P, Q, H, B>,
): Route {
  return spec as unknown as Route;
}

const parse = (schema: Schema | undefined, raw: unknown, source: 'path' | 'query' | 'header' | 'body') =>
  schema === undefined ? undefined : parseInput(schema, raw, source);

/** The request headers a route declares, by lower-case name (only those: credentials never reach validation). */
function declaredHeaders(ctx: Context, schema: Schema | undefined): Record<string, string> {
  const entries = (schema as { entries?: Record<string, unknown> } | undefined)?.entries ?? {};
  return Object.fromEntries(Object.keys(entries).flatMap((name) => (ctx.get(name) ? [[name, ctx.get(name)]] : [])));
}

async function principalFor(ctx: AppContext, access: AccessRule, authenticator: Authenticator): Promise<Principal> {
  const principal = await authenticator.authenticate(credentialOf(ctx, access));
  authorize(principal, access);
  ctx.state.principal = principal;
  return principal;
}

/**
 * DESIGN §21: the credential is checked (and counted toward its rate limit) before the body is
 * read, so nobody without one can make the web hold a body. Only a route that takes its credential
 * in the body (`bodyToken`), asked without an Authorization header, reads the body first (under
 * the normal body limit: those routes are not /v1's).
 */
async function admit(ctx: AppContext, declared: Route, authenticator: Authenticator, readBody: BodyReader, limits?: RateLimiter): Promise<Principal | undefined> {
  if (declared.auth === 'public') {
    await readBody(ctx);
    return undefined;
  }
  const bodyFirst = declared.auth.bodyToken === true && !ctx.get('authorization');
  if (bodyFirst) await readBody(ctx);
  const principal = await principalFor(ctx, declared.auth, authenticator);
  if (limits) await limits.admit(principal, (headers) => ctx.set(headers));
  if (!bodyFirst) await readBody(ctx);
  return principal;
}

function respond(ctx: AppContext, route: Route, result: unknown): void {
  if (route.streams && result === undefined) return;
  if (result instanceof Reply) {
    ctx.status = result.status;
    ctx.set(result.headers);
    if (result.body !== undefined) ctx.body = result.body;
    return;
  }
  ctx.status = route.status ?? 200;
  if (result !== undefined) ctx.body = result;
}

/** The paths whose authenticated requests count toward a credential's rate limit (DESIGN §18). */
const RATE_LIMITED_PATH = /^\/(api|v1)\/|^\/mcp$/;

/**
 * A Koa router serving the declared routes. With a `limiter`, every authenticated request on
 * /api/*, /v1/* and /mcp counts toward its credential's rate limit, once it is authorized and
 * before its input is read (a refused request costs no more work). `readBody` reads JSON bodies
 * (src/http/body.ts); without it a route sees none.
 */
export function mountRoutes(routes: Route[], authenticator: Authenticator, limiter?: RateLimiter, readBody: BodyReader = async () => {}): Router<AppState> {
  const router = new Router<AppState>();
  for (const declared of routes) {
    const limits = declared.auth !== 'public' && RATE_LIMITED_PATH.test(declared.path) ? limiter : undefined;
    router.register(declared.path, [declared.method], async (ctx: AppContext) => {
      const principal = await admit(ctx, declared, authenticator, readBody, limits);
      const params = parse(declared.params, { ...(ctx as AppContext & { params: Record<string, string> }).params }, 'path');
      const query = parse(declared.query, { ...ctx.query }, 'query');
      const headers = parse(declared.headers, declaredHeaders(ctx, declared.headers), 'header');
      const body = declared.readsBody ? undefined : parse(declared.body, ctx.state.body, 'body');
      respond(ctx, declared, await declared.handle({ params, query, headers, body, principal, ctx } as RouteInput<Access, undefined, undefined, undefined, undefined>));
    });
  }
  return router;
}
