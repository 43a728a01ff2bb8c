import type { Principal } from './authenticator.js';
import type { Actor } from '../audit/log.js';
import type { AppContext } from './route.js';

/** Where a request came from: the client address (TRUST_PROXY_HOPS applied) and its request id. */
export function originOf(ctx: AppContext): Pick<Actor, 'ip' | 'requestId'> {
  return { ip: ctx.ip || null, requestId: ctx.state.requestId ?? null };
}

/** The audit log's view of who makes a request: the user, and which credential ("jwt" or the key's prefix). */
export function actorOf(principal: Principal, ctx: AppContext): Actor {
  const credential = principal.kind === 'jwt' ? 'jwt' : (principal.keyPrefix ?? 'api_key');
  return { userId: principal.user.id, credential, ...originOf(ctx) };
}
