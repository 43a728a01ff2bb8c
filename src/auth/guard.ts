import type { Context } from 'koa';
import type { Role } from '../db/models.js';
import { AuthError, ForbiddenError } from '../shared/errors.js';
import type { Principal } from './authenticator.js';
import type { Scope } from './scopes.js';

/**
 * One declarative rule per route (DESIGN §3):
 * - `scope`: the spec's scope that lets a scoped key call it; without it only full access may.
 * - `anyKey`: every valid credential may call it (GET /api/auth/verify).
 * - `writes`: creates or changes keys, agents, KBs or connectors, which restricted users may not.
 * - `role`: a role the user must have.
 * - `bodyToken`: the credential may arrive as body field `token` (streaming endpoints).
 */
export interface AccessRule {
  scope?: Scope;
  anyKey?: boolean;
  writes?: boolean;
  role?: Role;
  bodyToken?: boolean;
}

/** Administrative endpoints (DESIGN §9): role admin, with full access or a key of scope `admin`. */
export const ADMIN: AccessRule = { scope: 'admin', role: 'admin' };

function bearer(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  if (!match) throw new AuthError('invalid_token', 'The Authorization header must be "Bearer <token>"');
  return match[1];
}

export function authorize(principal: Principal, rule: AccessRule): void {
  if (principal.scopes !== null && !rule.anyKey && !(rule.scope && principal.scopes.includes(rule.scope))) {
    const held = principal.scopes.join(' ') || 'none';
    const need = rule.scope ? `scope "${rule.scope}"` : 'full access (a JWT or an unscoped key)';
    throw new ForbiddenError(`This API key's scopes (${held}) do not allow this endpoint; it needs ${need}`);
  }
  if (rule.writes && principal.user.role === 'restricted') {
    throw new ForbiddenError('Restricted users may not create or change this resource');
  }
  if (rule.role && principal.user.role !== rule.role) throw new ForbiddenError(`This endpoint requires the ${rule.role} role`);
}

/** The request's credential: `Authorization: Bearer …`, or body field `token` where the rule allows it. */
export function credentialOf(ctx: Context, rule: AccessRule): string | undefined {
  const credential = bearer(ctx.get('authorization') || undefined);
  if (credential || !rule.bodyToken) return credential;
  const token = (ctx.state.body as { token?: unknown } | undefined)?.token;
  return typeof token === 'string' && token.length > 0 ? token : undefined;
}
