import * as v from 'valibot';
import type { Services } from '../services.js';
import { route, type Route } from '../auth/route.js';
import { pageOf } from '../shared/record-schemas.js';
import { ADMIN, credentialOf } from '../auth/guard.js';
import { DASHBOARD_PATH, dashboardSessionOf } from '../admin/dashboard.js';
import { instantText, paginationQuery, uuidText } from '../http/validation.js';
import { AuditRecordSchema } from '../audit/records.js';

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

const QueueCountsRecord = v.strictObject({
  name: v.string(),
  waiting: v.number(),
  active: v.number(),
  delayed: v.number(),
  failed: v.number(),
  completed: v.number(),
  paused: v.number(),
  is_paused: v.boolean(),
  workers: v.nullable(v.number()),
});
const DashboardTicketRecord = v.strictObject({
  ticket: v.pipe(v.string(), v.description('Single use; POST it as the form field `ticket` to `enter_url` (a same-origin form) before expires_at')),
  enter_url: v.string(),
  expires_at: v.pipe(v.string(), v.isoTimestamp()),
});

/** Queues and the audit log, for administrators (DESIGN §9). The audit log has no endpoint that changes it. */
export function adminOperationsRoutes({ audit, queueStats, dashboardTickets }: Services): Route[] {
  return [
    route({
      method: 'POST',
      path: '/api/admin/dashboard-ticket',
      summary: 'A one-time ticket (60 s) into the queue dashboard for this admin and credential: the console opens the dashboard with it',
      auth: ADMIN,
      responses: { 201: DashboardTicketRecord },
      status: 201,
      handle: async ({ principal, ctx }) => {
        const { ticket, expiresAt } = await dashboardTickets.issue(dashboardSessionOf(principal, credentialOf(ctx, ADMIN)!));
        return { ticket, enter_url: `${DASHBOARD_PATH}/enter`, expires_at: expiresAt.toISOString() };
      },
    }),
    route({
      method: 'GET',
      path: '/api/admin/queues',
      summary: 'Job counts and workers per BullMQ queue (cached for 2 s)',
      auth: ADMIN,
      responses: { 200: v.strictObject({ queues: v.array(QueueCountsRecord) }) },
      handle: async () => ({ queues: await queueStats.counts() }),
    }),
    route({
      method: 'GET',
      path: '/api/admin/audit-log',
      summary: 'The audit log, newest first (actor_id, action, target_id, from, to)',
      auth: ADMIN,
      responses: { 200: pageOf(AuditRecordSchema) },
      query: AuditQuery,
      handle: ({ query: { actor_id, action, target_id, from, to, ...page } }) => audit.list({ actor_id, action, target_id, from, to }, page),
    }),
  ];
}
