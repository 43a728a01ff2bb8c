import * as v from 'valibot';
import type { Services } from '../services.js';
import { runLogFields } from '../logger.js';
import { route, type Route } from '../auth/route.js';
import { pageOf } from '../shared/record-schemas.js';
import { RunAcceptedSchema, RunRecordSchema } from '../engine/run-records.js';
import { ScheduleRecordSchema } from '../schedules/records.js';
import { paginationQuery, uuidText } from '../http/validation.js';
import { canonicalTimeZone, cronFieldCount, cronProblem, MAX_CRON_LENGTH, MAX_EVERY_SECONDS, timingProblems } from '../schedules/timing.js';
import { RUN_MODES } from '../shared/run-statuses.js';

const SchedulePath = v.object({ id: uuidText });
const mode = v.picklist(RUN_MODES);
const q = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(32_000));
const name = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(200));
const userMetadata = v.nullable(v.pipe(v.string(), v.maxLength(16_384)));

/** A cron of 5 fields, or 6 with seconds first, that cron-parser (BullMQ's) reads: its first problem is named. */
const cron = v.pipe(
  v.string(),
  v.trim(),
  v.maxLength(MAX_CRON_LENGTH),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const fields = cronFieldCount(dataset.value);
    const problem = fields === 5 || fields === 6 ? cronProblem(dataset.value, 'UTC', new Date()) : `has ${fields} fields; a cron has 5 (minute hour day-of-month month day-of-week), or 6 with seconds first`;
    if (problem) addIssue({ message: problem });
  }),
);

const timezone = v.pipe(
  v.string(),
  v.maxLength(64),
  v.check((zone) => canonicalTimeZone(zone) !== undefined, 'must be an IANA time zone, such as "UTC" or "Europe/Berlin"'),
  v.transform((zone) => canonicalTimeZone(zone) ?? zone),
);

const bodies = (minIntervalSeconds: number) => {
  const every = v.pipe(v.number(), v.integer(), v.minValue(minIntervalSeconds), v.maxValue(MAX_EVERY_SECONDS));
  return {
    create: v.pipe(
      v.strictObject({
        name: v.optional(name),
        agent_id: v.optional(v.nullable(uuidText), null),
        mode: v.optional(mode, 'react'),
        q,
        cron: v.optional(v.nullable(cron), null),
        every_seconds: v.optional(v.nullable(every), null),
        timezone: v.optional(timezone, 'UTC'),
        conversation_id: v.optional(v.nullable(uuidText), null),
        user_metadata: v.optional(userMetadata, null),
        enabled: v.optional(v.boolean(), true),
      }),
      // Exactly one of cron and every_seconds, and a cron no more frequent than SCHEDULE_MIN_INTERVAL_S, named by field.
      v.rawCheck(({ dataset, addIssue }) => {
        // Field checks leave the value typed: the whole is judged only once every field passed.
        if (!dataset.typed || dataset.issues) return;
        for (const { field, message } of timingProblems(dataset.value, minIntervalSeconds, new Date())) {
          addIssue({ message, path: [{ type: 'object', origin: 'value', input: dataset.value, key: field, value: dataset.value[field] }] });
        }
      }),
    ),
    update: v.pipe(
      v.strictObject({
        name: v.optional(name),
        agent_id: v.optional(v.nullable(uuidText)),
        mode: v.optional(mode),
        q: v.optional(q),
        cron: v.optional(v.nullable(cron)),
        every_seconds: v.optional(v.nullable(every)),
        timezone: v.optional(timezone),
        conversation_id: v.optional(v.nullable(uuidText)),
        user_metadata: v.optional(userMetadata),
        enabled: v.optional(v.boolean()),
      }),
      v.check((body) => Object.keys(body).length > 0, 'send at least one field to change'),
    ),
  };
};

/** Schedules (DESIGN §19): scope `chat`; restricted users may read them and trigger runs, not create or change them; another user's → 404. */
export function scheduleRoutes({ schedules, config }: Services): Route[] {
  const { create, update } = bodies(config.schedules.minIntervalSeconds);
  return [
    route({
      method: 'GET',
      path: '/api/schedules',
      summary: "List the caller's schedules, newest first",
      auth: { scope: 'chat' },
      responses: { 200: pageOf(ScheduleRecordSchema) },
      query: paginationQuery,
      handle: ({ principal, query }) => schedules.list(principal.user.id, query),
    }),
    route({
      method: 'POST',
      path: '/api/schedules',
      summary: 'Run a query on a cron (in a time zone) or every N seconds, as background runs',
      auth: { scope: 'chat', writes: true },
      responses: { 201: ScheduleRecordSchema },
      errors: [404, 409],
      body: create,
      status: 201,
      handle: ({ principal, body }) => schedules.create(principal.user.id, body),
    }),
    route({
      method: 'GET',
      path: '/api/schedules/:id',
      summary: 'Read a schedule',
      auth: { scope: 'chat' },
      responses: { 200: ScheduleRecordSchema },
      errors: [404],
      params: SchedulePath,
      handle: ({ principal, params }) => schedules.get(principal.user.id, params.id),
    }),
    route({
      method: 'PATCH',
      path: '/api/schedules/:id',
      summary: 'Change a schedule (cron or every_seconds replaces its timing; enabled switches it off and on)',
      auth: { scope: 'chat', writes: true },
      responses: { 200: ScheduleRecordSchema },
      errors: [404],
      params: SchedulePath,
      body: update,
      handle: ({ principal, params, body }) => schedules.update(principal.user.id, params.id, body),
    }),
    route({
      method: 'DELETE',
      path: '/api/schedules/:id',
      summary: 'Delete a schedule (its runs stay)',
      auth: { scope: 'chat', writes: true },
      responses: { 204: null },
      errors: [404],
      params: SchedulePath,
      status: 204,
      handle: ({ principal, params }) => schedules.remove(principal.user.id, params.id),
    }),
    route({
      method: 'GET',
      path: '/api/schedules/:id/runs',
      summary: "A schedule's runs, newest first",
      auth: { scope: 'chat' },
      responses: { 200: pageOf(RunRecordSchema) },
      errors: [404],
      params: SchedulePath,
      query: paginationQuery,
      handle: ({ principal, params, query }) => schedules.runsOf(principal.user.id, params.id, query),
    }),
    route({
      method: 'POST',
      path: '/api/schedules/:id/trigger',
      summary: "Start the schedule's run now, in the background, as POST /api/runs does",
      auth: { scope: 'chat' },
      responses: { 202: RunAcceptedSchema },
      responseHeaders: { Location: 'The run: GET it (with ?wait=N) to follow it' },
      errors: [404, 409],
      params: SchedulePath,
      status: 202,
      handle: async ({ principal, params, ctx }) => {
        const run = await schedules.trigger(principal.user.id, params.id, { budgets: principal.budgets, requestId: ctx.state.requestId });
        ctx.state.log = ctx.state.log.child(runLogFields(run));
        ctx.set('Location', `/api/runs/${run.id}`);
        return { run_id: run.id, conversation_id: run.conversation_id, status: run.status };
      },
    }),
  ];
}
