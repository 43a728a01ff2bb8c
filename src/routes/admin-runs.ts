import * as v from 'valibot';
import type { Services } from '../services.js';
import { route, type Route } from '../auth/route.js';
import { CancelAcceptedSchema } from '../engine/run-records.js';
import { pageOf } from '../shared/record-schemas.js';
import { runEventsRoute } from './runs.js';
import { ADMIN } from '../auth/guard.js';
import { actorOf } from '../auth/actor.js';
import { instantText, paginationQuery, uuidText } from '../http/validation.js';
import { RUN_MODES, RUN_STATUSES } from '../shared/run-statuses.js';
import { AdminRunSchema } from '../admin/records.js';

const DAY_MS = 24 * 3600 * 1000;
/** Usage windows default to the last 30 days and may span at most 366. */
const DEFAULT_WINDOW_DAYS = 30;
const MAX_WINDOW_DAYS = 366;

const window = { from: v.optional(instantText), to: v.optional(instantText) };
const beforeTo = (q: { from?: Date; to?: Date }) => !q.from || !q.to || q.from < q.to;

const RunsQuery = v.pipe(
  v.object({
    ...paginationQuery.entries,
    ...window,
    status: v.optional(v.picklist(RUN_STATUSES)),
    user_id: v.optional(uuidText),
    mode: v.optional(v.picklist(RUN_MODES)),
    /** DESIGN §24: the runs of one eval's items. */
    eval_id: v.optional(uuidText),
  }),
  v.forward(v.check((q) => beforeTo(q), 'from must be before to'), ['from']),
);

const UsageQuery = v.pipe(
  v.object({ ...paginationQuery.entries, ...window, user_id: v.optional(uuidText), group_by: v.optional(v.picklist(['user', 'day']), 'user') }),
  v.forward(v.check((q) => beforeTo(q), 'from must be before to'), ['from']),
  v.transform((q) => {
    const to = q.to ?? (q.from ? new Date(Math.min(Date.now(), q.from.getTime() + DEFAULT_WINDOW_DAYS * DAY_MS)) : new Date());
    return { ...q, to, from: q.from ?? new Date(to.getTime() - DEFAULT_WINDOW_DAYS * DAY_MS) };
  }),
  v.forward(v.check((q) => q.from < q.to, 'from must be before to (to defaults to now)'), ['from']),
  v.forward(v.check((q) => q.to.getTime() - q.from.getTime() <= MAX_WINDOW_DAYS * DAY_MS, `the window may span at most ${MAX_WINDOW_DAYS} days`), ['to']),
);

const usageCounts = Object.fromEntries(
  ['runs', 'succeeded', 'failed', 'cancelled', 'prompt_tokens', 'completion_tokens', 'reasoning_tokens'].map((name) => [name, v.number()]),
);
const UsageReport = v.strictObject({
  ...pageOf(
    v.strictObject({
      key: v.pipe(v.string(), v.description('The user id, or the UTC day (YYYY-MM-DD)')),
      ...usageCounts,
      cost: v.pipe(v.nullable(v.number()), v.description("The sum of the row's run costs where their models had a price (DESIGN §18); null when no run of the row had one")),
    }),
  ).entries,
  from: v.pipe(v.string(), v.isoTimestamp()),
  to: v.pipe(v.string(), v.isoTimestamp()),
  group_by: v.picklist(['user', 'day']),
});

const RunPath = v.object({ id: uuidText });

/** Runs across users and what they used, for administrators (DESIGN §9). */
export function adminRunRoutes(services: Services): Route[] {
  const { runs, runReports } = services;
  return [
    route({
      method: 'GET',
      path: '/api/admin/runs',
      summary: 'List runs across users, newest first (status, user_id, mode, from, to)',
      auth: ADMIN,
      responses: { 200: pageOf(AdminRunSchema) },
      query: RunsQuery,
      handle: ({ query: { status, user_id, mode, from, to, eval_id, ...page } }) => runReports.list({ status, user_id, mode, from, to, eval_id }, page),
    }),
    route({
      method: 'GET',
      path: '/api/admin/runs/:id',
      summary: "Read any user's run (its page in the console)",
      auth: ADMIN,
      responses: { 200: AdminRunSchema },
      params: RunPath,
      handle: ({ params }) => runReports.one(params.id),
    }),
    runEventsRoute(services, {
      path: '/api/admin/runs/:id/events',
      whose: "any user's run's",
      auth: ADMIN,
      find: (_, id) => runs.joinableAnyRun(id),
    }),
    route({
      method: 'POST',
      path: '/api/admin/runs/:id/cancel',
      summary: "Cancel any user's queued or running run",
      auth: ADMIN,
      responses: { 202: CancelAcceptedSchema },
      errors: [409],
      params: RunPath,
      status: 202,
      handle: async ({ params, principal, ctx }) => ({ run_id: (await runs.cancelAny(params.id, actorOf(principal, ctx))).id, status: 'cancelling' }),
    }),
    route({
      method: 'GET',
      path: '/api/admin/usage',
      summary: 'Runs, outcomes, tokens and cost per user or per UTC day in [from, to) (default: the last 30 days; at most 366)',
      auth: ADMIN,
      responses: { 200: UsageReport },
      query: UsageQuery,
      handle: ({ query: { from, to, user_id, group_by, ...page } }) => runReports.usage({ from, to, user_id, group_by }, page),
    }),
  ];
}
