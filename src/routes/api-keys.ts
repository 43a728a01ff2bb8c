import * as v from 'valibot';
import type { Services } from '../services.js';
import { route, type Route } from '../auth/route.js';
import { ApiKeySchema } from '../auth/records.js';
import { pageOf } from '../shared/record-schemas.js';
import { scopesField } from '../auth/scopes.js';
import { paginationQuery, uuidText } from '../http/validation.js';
import { actorOf } from '../auth/actor.js';
import { limitFields } from '../limits/settings.js';

const timestamp = v.pipe(v.string(), v.isoTimestamp(), v.transform((text) => new Date(text)));
const keyName = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(100));

const CreateKeyBody = v.strictObject({
  name: keyName,
  scopes: v.optional(v.nullable(scopesField)),
  expires_at: v.optional(
    v.nullable(v.pipe(timestamp, v.check((date) => date.getTime() > Date.now(), 'expires_at must be in the future'))),
  ),
  ...limitFields,
});

export const UpdateKeyBody = v.pipe(
  v.strictObject({
    name: v.optional(keyName),
    is_active: v.optional(v.boolean()),
    expires_at: v.optional(v.nullable(timestamp)),
    ...limitFields,
  }),
  v.check((body) => Object.keys(body).length > 0, 'send at least one of name, is_active, expires_at, rate_limit_rpm, token_budget'),
);

export const KeyParams = v.object({ id: uuidText });

/** The caller's own API keys. Listing needs full access; creating and changing them, a user who is not restricted. */
export function apiKeyRoutes({ apiKeys }: Services): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/me/api-keys',
      summary: "List the caller's API keys (never the full key)",
      auth: {},
      responses: { 200: pageOf(ApiKeySchema) },
      query: paginationQuery,
      handle: ({ principal, query }) => apiKeys.list(principal.user.id, query),
    }),
    route({
      method: 'POST',
      path: '/api/me/api-keys',
      summary: 'Create an API key; the full key is in this response only',
      auth: { writes: true },
      responses: { 201: v.strictObject({ ...ApiKeySchema.entries, key: v.pipe(v.string(), v.description('The full key (svc_…), shown in this response only')) }) },
      body: CreateKeyBody,
      status: 201,
      handle: ({ principal, body, ctx }) => apiKeys.create(principal.user.id, body, principal.scopes, actorOf(principal, ctx)),
    }),
    route({
      method: 'PATCH',
      path: '/api/me/api-keys/:id',
      summary: 'Rename, enable or disable an API key, or change its expiry or limits (rate_limit_rpm, token_budget)',
      auth: { writes: true },
      responses: { 200: ApiKeySchema },
      params: KeyParams,
      body: UpdateKeyBody,
      handle: ({ principal, params, body, ctx }) => apiKeys.update(principal.user.id, params.id, body, actorOf(principal, ctx)),
    }),
    route({
      method: 'DELETE',
      path: '/api/me/api-keys/:id',
      summary: 'Delete an API key',
      auth: { writes: true },
      responses: { 204: null },
      params: KeyParams,
      status: 204,
      handle: ({ principal, params, ctx }) => apiKeys.remove(principal.user.id, params.id, actorOf(principal, ctx)),
    }),
  ];
}
