import * as v from 'valibot';
import type { Services } from '../services.js';
import { route, type Route } from '../http/route.js';
import { ADMIN } from '../auth/guard.js';
import { instantText, paginationQuery, uuidText } from '../http/validation.js';

const AuditQuery = v.pipe(
  v.object({
    ...paginationQuery.entries,
    actor_id: v.optional(uuidText),
    action: v.optional(v.pipe(v.string(), v.regex(/^[a-z_]{1,32}\.[a-z_]{1,32}$/, 'must be an action like user.disable'))),
    target_id: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200))),
    from: v.optional(instantText),
    to: v.optional(instantText),
  }),
  v.forward(v.check((q) => !q.from || !q.to || q.from < q.to, 'from must be before to'), ['from']),
);

/** Queues and the audit log, for administrators (DESIGN §9). The audit log has no endpoint that changes it. */
export function adminOperationsRoutes({ audit, queueStats }: Services): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/admin/queues',
      summary: 'Job counts and workers per BullMQ queue (cached for 2 s)',
      auth: ADMIN,
      handle: async () => ({ queues: await queueStats.counts() }),
    }),
    route({
      method: 'GET',
      path: '/api/admin/audit-log',
      summary: 'The audit log, newest first (actor_id, action, target_id, from, to)',
      auth: ADMIN,
      query: AuditQuery,
      handle: ({ query: { actor_id, action, target_id, from, to, ...page } }) => audit.list({ actor_id, action, target_id, from, to }, page),
    }),
  ];
}
