import Router from '@koa/router';
import * as v from 'valibot';
import type { Services } from '../services.js';
import { guard } from '../auth/guard.js';
import type { Principal } from '../auth/authenticator.js';
import { validateBody } from '../http/validation.js';

const LoginBody = v.strictObject({
  email: v.pipe(v.string(), v.minLength(1), v.maxLength(320)),
  password: v.pipe(v.string(), v.minLength(1), v.maxLength(1024)),
});

const RefreshBody = v.strictObject({
  refresh_token: v.pipe(v.string(), v.minLength(1), v.maxLength(512)),
});

export function authRoutes({ sessions, authenticator }: Services): Router {
  const router = new Router({ prefix: '/api/auth' });

  router.post('/login', async (ctx) => {
    const { email, password } = validateBody(ctx, LoginBody);
    ctx.body = await sessions.login(email, password, ctx.ip);
  });

  router.post('/refresh', async (ctx) => {
    const { refresh_token } = validateBody(ctx, RefreshBody);
    ctx.body = await sessions.refresh(refresh_token);
  });

  router.get('/verify', guard(authenticator, { anyKey: true }), (ctx) => {
    const principal = ctx.state.principal as Principal;
    const expiresAt = principal.expiresAt;
    ctx.body = {
      valid: true,
      token_type: principal.kind,
      user_id: principal.user.id,
      scopes: principal.scopes === null ? null : principal.scopes.join(' '),
      expires_at: expiresAt?.toISOString() ?? null,
      expires_in: expiresAt ? Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000)) : null,
    };
  });

  return router;
}
