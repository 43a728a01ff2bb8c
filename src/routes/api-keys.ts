import Router from '@koa/router';
import * as v from 'valibot';
import type { Services } from '../services.js';
import { guard } from '../auth/guard.js';
import type { Principal } from '../auth/authenticator.js';
import { scopesField } from '../auth/scopes.js';
import { paginationQuery, uuidText, validateBody, validateParams, validateQuery } from '../http/validation.js';

const timestamp = v.pipe(v.string(), v.isoTimestamp(), v.transform((text) => new Date(text)));
const keyName = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(100));

const CreateKeyBody = v.strictObject({
  name: keyName,
  scopes: v.optional(v.nullable(scopesField)),
  expires_at: v.optional(
    v.nullable(v.pipe(timestamp, v.check((date) => date.getTime() > Date.now(), 'expires_at must be in the future'))),
  ),
});

const UpdateKeyBody = v.pipe(
  v.strictObject({
    name: v.optional(keyName),
    is_active: v.optional(v.boolean()),
    expires_at: v.optional(v.nullable(timestamp)),
  }),
  v.check((body) => Object.keys(body).length > 0, 'send at least one of name, is_active, expires_at'),
);

const KeyParams = v.object({ id: uuidText });

export function apiKeyRoutes({ apiKeys, authenticator }: Services): Router {
  const router = new Router({ prefix: '/api/me/api-keys' });
  const principalOf = (state: Record<string, unknown>) => state.principal as Principal;

  router.get('/', guard(authenticator, {}), async (ctx) => {
    const page = validateQuery(ctx, paginationQuery);
    ctx.body = await apiKeys.list(principalOf(ctx.state).user.id, page);
  });

  router.post('/', guard(authenticator, { writes: true }), async (ctx) => {
    const body = validateBody(ctx, CreateKeyBody);
    const principal = principalOf(ctx.state);
    ctx.status = 201;
    ctx.body = await apiKeys.create(principal.user.id, body, principal.scopes);
  });

  router.patch('/:id', guard(authenticator, { writes: true }), async (ctx) => {
    const { id } = validateParams(ctx, KeyParams);
    const changes = validateBody(ctx, UpdateKeyBody);
    ctx.body = await apiKeys.update(principalOf(ctx.state).user.id, id, changes);
  });

  router.delete('/:id', guard(authenticator, { writes: true }), async (ctx) => {
    const { id } = validateParams(ctx, KeyParams);
    await apiKeys.remove(principalOf(ctx.state).user.id, id);
    ctx.status = 204;
  });

  return router;
}
