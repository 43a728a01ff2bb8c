import * as v from 'valibot';
import type { Services } from '../services.js';
import { route, type Route } from '../auth/route.js';
import { TokenPairSchema } from '../auth/records.js';
import { originOf } from '../auth/actor.js';

const LoginBody = v.strictObject({
  email: v.pipe(v.string(), v.minLength(1), v.maxLength(320)),
  password: v.pipe(v.string(), v.minLength(1), v.maxLength(1024)),
});

const RefreshBody = v.strictObject({
  refresh_token: v.pipe(v.string(), v.minLength(1), v.maxLength(512)),
});

const CredentialInfo = v.strictObject({
  valid: v.literal(true),
  token_type: v.picklist(['jwt', 'api_key']),
  user_id: v.pipe(v.string(), v.uuid()),
  scopes: v.nullable(v.string()),
  expires_at: v.nullable(v.pipe(v.string(), v.isoTimestamp())),
  expires_in: v.nullable(v.number()),
});

export function authRoutes({ sessions }: Services): Route[] {
  return [
    route({
      method: 'POST',
      path: '/api/auth/login',
      summary: 'Log in: an access token (JWT, 2 h) and a single-use refresh token',
      auth: 'public',
      responses: { 200: TokenPairSchema },
      errors: [401],
      body: LoginBody,
      handle: ({ body, ctx }) => sessions.login(body.email, body.password, originOf(ctx)),
    }),
    route({
      method: 'POST',
      path: '/api/auth/refresh',
      summary: 'Exchange a refresh token for a new pair (reusing a spent one revokes its session)',
      auth: 'public',
      responses: { 200: TokenPairSchema },
      errors: [401],
      body: RefreshBody,
      handle: ({ body, ctx }) => sessions.refresh(body.refresh_token, originOf(ctx)),
    }),
    route({
      method: 'GET',
      path: '/api/auth/verify',
      summary: 'Describe the credential the request carries (any valid key or token)',
      auth: { anyKey: true },
      responses: { 200: CredentialInfo },
      handle: ({ principal }) => {
        const { expiresAt } = principal;
        return {
          valid: true,
          token_type: principal.kind,
          user_id: principal.user.id,
          scopes: principal.scopes === null ? null : principal.scopes.join(' '),
          expires_at: expiresAt?.toISOString() ?? null,
          expires_in: expiresAt ? Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000)) : null,
        };
      },
    }),
  ];
}
