import * as v from 'valibot';
import type { Services } from '../services.js';
import { route, type Route } from '../auth/route.js';
import { AdminApiKeySchema } from '../auth/records.js';
import { pageOf } from '../shared/record-schemas.js';
import { ADMIN } from '../auth/guard.js';
import { actorOf } from '../auth/actor.js';
import { booleanText, paginationQuery, uuidText } from '../http/validation.js';
import { KeyParams, UpdateKeyBody } from './api-keys.js';

const ListQuery = v.object({ ...paginationQuery.entries, user_id: v.optional(uuidText), is_active: v.optional(booleanText) });

/** Any user's API keys, for administrators (DESIGN §9): never the full key. */
export function adminKeyRoutes({ apiKeys }: Services): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/admin/api-keys',
      summary: "List every user's API keys (user_id, is_active filters)",
      auth: ADMIN,
      responses: { 200: pageOf(AdminApiKeySchema) },
      query: ListQuery,
      handle: ({ query: { user_id, is_active, ...page } }) => apiKeys.listAll({ user_id, is_active }, page),
    }),
    route({
      method: 'PATCH',
      path: '/api/admin/api-keys/:id',
      summary: "Rename, enable or disable any user's API key, or change its expiry or limits (rate_limit_rpm, token_budget)",
      auth: ADMIN,
      responses: { 200: AdminApiKeySchema },
      params: KeyParams,
      body: UpdateKeyBody,
      handle: ({ params, body, principal, ctx }) => apiKeys.update(null, params.id, body, actorOf(principal, ctx)),
    }),
    route({
      method: 'DELETE',
      path: '/api/admin/api-keys/:id',
      summary: "Delete any user's API key",
      auth: ADMIN,
      responses: { 204: null },
      params: KeyParams,
      status: 204,
      handle: ({ params, principal, ctx }) => apiKeys.remove(null, params.id, actorOf(principal, ctx)),
    }),
  ];
}
