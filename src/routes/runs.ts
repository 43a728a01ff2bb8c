import * as v from 'valibot';
import { clientToolsSchema, toolOutputsBody } from '../shared/client-tools.js';
import type { Services } from '../services.js';
import { runLogFields } from '../logger.js';
import { Reply, route, type Route } from '../auth/route.js';
import { CancelAcceptedSchema, presentRun, RunAcceptedSchema, RunRecordSchema } from '../engine/run-records.js';
import { runEventStream, runStreamHeaders } from '../runs/records.js';
import { integerText, uuidText, docMode, ensureOutputSchemas, imageIds, multitaskStrategy, outputSchema } from '../http/validation.js';
import { schemaFormat } from '../shared/output-schema.js';
import { longPollBody, untilDoneOrRequiresAction } from '../runs/wait.js';
import { streamRun } from '../runs/stream.js';
import type { AccessRule } from '../auth/guard.js';
import type { Principal } from '../auth/authenticator.js';
import type { Run } from '../db/models.js';
import { RUN_MODES } from '../shared/run-statuses.js';

const RunPath = v.object({ id: uuidText });
const EVENT_ID = /^(\d{1,20})-(\d{1,20})$/;
const MAX_U64 = 2n ** 64n - 1n;
/** Checks run on even when the pattern failed (valibot reports every issue), so this one reads the pattern again. */
const fitsRedis = (id: string) => EVENT_ID.exec(id)?.slice(1).every((part) => BigInt(part) <= MAX_U64) ?? true;
/** Clocks differ; a day ahead is past any skew, and an id further ahead names no event of any run. */
const FUTURE_SLACK_MS = 24 * 3600 * 1000;
/** Event ids begin with the Redis time (ms) they were written at: one from the future was never sent, and would wait forever. */
const notFromTheFuture = (id: string) => {
  const ms = EVENT_ID.exec(id)?.[1];
  return ms === undefined || BigInt(ms) <= BigInt(Date.now() + FUTURE_SLACK_MS);
};
/** A Redis stream entry id, as sent in each event's `id:` line: two unsigned 64-bit numbers, the first a time not in the future. */
const eventId = v.pipe(
  v.string(),
  v.regex(EVENT_ID, 'String should be an event id like 1700000000000-0'),
  v.check(fitsRedis, 'each part of an event id must fit in 64 bits'),
  v.check(notFromTheFuture, 'an event id names the time its event was written: this one is in the future, so no event has it'),
);
const EventsQuery = v.object({ after: v.optional(eventId) });
const ReadQuery = v.object({ wait: v.optional(integerText({ min: 0, max: 60 })) });

/** DESIGN §11: a person's decision on a tool call (its id as the `approval_required` event gave it). */
const ApprovalBody = v.strictObject({
  call_id: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  decision: v.picklist(['approve', 'reject']),
  message: v.optional(v.pipe(v.string(), v.maxLength(2000))),
});

/** DESIGN §10: a run to start without holding a stream. */
const BackgroundRun = v.strictObject({
  mode: v.picklist(RUN_MODES),
  q: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(32_000)),
  conversation_id: v.optional(v.nullable(uuidText)),
  agent_id: v.optional(v.nullable(uuidText)),
  user_metadata: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(16_384)))),
  doc_mode: docMode,
  image_ids: imageIds,
  multitask_strategy: multitaskStrategy,
  /** DESIGN §23: the answer is JSON valid against this schema (overrides the agent's). */
  output_schema: outputSchema,
  client_tools: v.optional(clientToolsSchema),
});
const ApprovalAccepted = v.strictObject({ run_id: uuidText, call_id: v.string(), decision: v.picklist(['approve', 'reject']), status: v.picklist(['recorded', 'resuming']) });
const ToolOutputsAccepted = v.strictObject({ run_id: uuidText, status: v.picklist(['recorded', 'resuming']) });
const EventsHeaders = v.object({ 'last-event-id': v.optional(eventId) });

/**
 * A run after its POST: read it, join its event stream from anywhere (from the start or after
 * the last event a client saw), cancel it. Same scope as the chat endpoints; owner only.
 */
export function runRoutes(services: Services): Route[] {
  const { runs, relay, engine, cpu } = services;
  return [
    route({
      method: 'POST',
      path: '/api/runs',
      summary: 'Start a run in the background: 202 at once; follow it with GET (?wait=N), its events, or a webhook',
      auth: { scope: 'chat' },
      responses: { 202: RunAcceptedSchema },
      responseHeaders: { Location: 'The run: GET it (with ?wait=N) to follow it' },
      errors: [404, 409, 429],
      body: BackgroundRun,
      status: 202,
      handle: async ({ principal, body, ctx }) => {
        await ensureOutputSchemas(cpu, [[['output_schema'], body.output_schema]]);
        const run = await runs.start({ userId: principal.user.id, mode: body.mode, query: body.q, conversationId: body.conversation_id, agentId: body.agent_id, userMetadata: body.user_metadata, docMode: body.doc_mode, imageIds: body.image_ids ?? undefined, requestId: ctx.state.requestId, budgets: principal.budgets, multitaskStrategy: body.multitask_strategy ?? undefined, outputFormat: body.output_schema ? schemaFormat(body.output_schema) : null, clientTools: body.client_tools });
        ctx.state.log = ctx.state.log.child(runLogFields(run));
        ctx.set('Location', `/api/runs/${run.id}`);
        return { run_id: run.id, conversation_id: run.conversation_id, status: run.status };
      },
    }),
    route({
      method: 'GET',
      path: '/api/runs/:id',
      summary: 'Read a run; with ?wait=N (up to 60 s) the answer comes once the run is final, waits for your tool outputs (requires_action), or N seconds have passed',
      auth: { scope: 'chat' },
      responses: { 200: RunRecordSchema },
      params: RunPath,
      query: ReadQuery,
      handle: async ({ principal, params, query, ctx }) => {
        const run = await runs.ownRun(principal.user.id, params.id);
        if (run.isFinal || !query.wait) return presentRun(run);
        const waited = untilDoneOrRequiresAction(relay, engine, run, query.wait * 1000).then(() => runs.ownRun(principal.user.id, run.id));
        return new Reply(200, longPollBody(waited, run, ctx.state.log), { 'Content-Type': 'application/json; charset=utf-8' });
      },
    }),
    runEventsRoute(services, {
      path: '/api/runs/:id/events',
      whose: "a run's",
      auth: { scope: 'chat' },
      find: (principal, id) => runs.joinableRun(principal.user.id, id),
    }),
    route({
      method: 'POST',
      path: '/api/runs/:id/approvals',
      summary: 'Approve or reject a tool call the run waits on; the last decision resumes it',
      auth: { scope: 'chat' },
      responses: { 202: ApprovalAccepted },
      errors: [409],
      params: RunPath,
      body: ApprovalBody,
      status: 202,
      handle: async ({ principal, params, body }) => {
        const status = await runs.decide(principal.user.id, params.id, body.call_id, { decision: body.decision, message: body.message });
        return { run_id: params.id, call_id: body.call_id, decision: body.decision, status };
      },
    }),
    route({
      method: 'POST',
      path: '/api/runs/:id/tool-outputs',
      summary: "The client's outputs for the client tool calls a run waits on (status requires_action); the last one resumes it",
      auth: { scope: 'chat' },
      responses: { 202: ToolOutputsAccepted },
      errors: [409],
      params: RunPath,
      body: toolOutputsBody,
      status: 202,
      handle: async ({ principal, params, body }) => ({ run_id: params.id, status: await runs.submitToolOutputs(principal.user.id, params.id, body.tool_outputs) }),
    }),
    route({
      method: 'POST',
      path: '/api/runs/:id/cancel',
      summary: 'Cancel a queued or running run',
      auth: { scope: 'chat' },
      responses: { 202: CancelAcceptedSchema },
      errors: [409],
      params: RunPath,
      status: 202,
      handle: async ({ principal, params }) => ({ run_id: (await runs.cancel(principal.user.id, params.id)).id, status: 'cancelling' }),
    }),
  ];
}

/**
 * GET …/:id/events (DESIGN §5, §13): the run's events replayed (all, or after Last-Event-ID or
 * ?after=), then followed live to done; 410 once a finished run's stream has expired. The owner's
 * route and the administrators' one differ only in who may call and how the run is found.
 */
export function runEventsRoute(
  { relay, openStreams }: Pick<Services, 'relay' | 'openStreams'>,
  spec: { path: string; whose: string; auth: AccessRule; find: (principal: Principal, runId: string) => Promise<Run> },
): Route {
  return route({
    method: 'GET',
    path: spec.path,
    summary: `Replay ${spec.whose} events (all, or after Last-Event-ID or ?after=), then follow it live to done`,
    auth: spec.auth,
    responses: { 200: runEventStream },
    responseHeaders: runStreamHeaders,
    errors: [410],
    params: RunPath,
    query: EventsQuery,
    headers: EventsHeaders,
    streams: true,
    handle: async ({ principal, params, query, headers, ctx }) => {
      const run = await spec.find(principal, params.id);
      await streamRun(ctx, relay, openStreams, run, headers['last-event-id'] ?? query.after ?? '0-0');
    },
  });
}
