import * as v from 'valibot';
import type { Services } from '../services.js';
import { route, type Route } from '../auth/route.js';
import { AdminUserSchema } from '../auth/records.js';
import { pageOf } from '../shared/record-schemas.js';
import { ADMIN } from '../auth/guard.js';
import { actorOf } from '../auth/actor.js';
import { booleanText, paginationQuery, uuidText } from '../http/validation.js';
import { limitFields } from '../limits/settings.js';

const ROLES = ['admin', 'member', 'restricted'] as const;
const name = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(100));

const ListQuery = v.object({
  ...paginationQuery.entries,
  q: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(320))),
  role: v.optional(v.picklist(ROLES)),
  is_active: v.optional(booleanText),
});

const CreateBody = v.strictObject({
  email: v.pipe(v.string(), v.trim(), v.maxLength(320), v.email('must be an email address')),
  name: v.optional(name),
  role: v.picklist(ROLES),
  password: v.optional(v.pipe(v.string(), v.minLength(8), v.maxLength(1024))),
});

const UpdateBody = v.pipe(
  v.strictObject({ name: v.optional(name), role: v.optional(v.picklist(ROLES)), is_active: v.optional(v.boolean()), ...limitFields }),
  v.check((body) => Object.keys(body).length > 0, 'send at least one of name, role, is_active, rate_limit_rpm, token_budget'),
);

const CreatedUser = v.strictObject({
  ...AdminUserSchema.entries,
  password: v.optional(v.pipe(v.string(), v.description('The generated password, when none was sent: shown in this response only'))),
});
const UserWithCounts = v.strictObject({
  ...AdminUserSchema.entries,
  counts: v.strictObject(Object.fromEntries(['api_keys', 'agents', 'conversations', 'runs', 'active_runs', 'knowledge_bases', 'connectors'].map((name) => [name, v.number()]))),
});

const UserPath = v.object({ id: uuidText });

/** Users, for administrators (DESIGN §9). A created user's generated password is in the create response only. */
export function adminUserRoutes({ userAdmin }: Services): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/admin/users',
      summary: 'List users (q: email contains; role; is_active)',
      auth: ADMIN,
      responses: { 200: pageOf(AdminUserSchema) },
      query: ListQuery,
      handle: ({ query: { q, role, is_active, ...page } }) => userAdmin.list({ q, role, is_active }, page),
    }),
    route({
      method: 'POST',
      path: '/api/admin/users',
      summary: 'Create a user; without a password one is generated and shown in this response only',
      auth: ADMIN,
      responses: { 201: CreatedUser },
      body: CreateBody,
      status: 201,
      handle: ({ body, principal, ctx }) => userAdmin.create(body, actorOf(principal, ctx)),
    }),
    route({
      method: 'GET',
      path: '/api/admin/users/:id',
      summary: 'Read a user, with counts of what they own',
      auth: ADMIN,
      responses: { 200: UserWithCounts },
      params: UserPath,
      handle: ({ params }) => userAdmin.get(params.id),
    }),
    route({
      method: 'PATCH',
      path: '/api/admin/users/:id',
      summary: "Rename a user, change their role or limits (rate_limit_rpm, token_budget), or disable (every credential refused, runs cancelled) or enable them",
      auth: ADMIN,
      responses: { 200: AdminUserSchema },
      errors: [409],
      params: UserPath,
      body: UpdateBody,
      handle: ({ params, body, principal, ctx }) => userAdmin.update(params.id, body, actorOf(principal, ctx)),
    }),
    route({
      method: 'DELETE',
      path: '/api/admin/users/:id',
      summary: 'Delete a user and everything they own (their runs are cancelled first)',
      auth: ADMIN,
      responses: { 204: null },
      errors: [409],
      params: UserPath,
      status: 204,
      handle: ({ params, principal, ctx }) => userAdmin.remove(params.id, actorOf(principal, ctx)),
    }),
  ];
}
