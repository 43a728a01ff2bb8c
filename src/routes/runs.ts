import Router from '@koa/router';
import * as v from 'valibot';
import type { Services } from '../services.js';
import { guard } from '../auth/guard.js';
import type { Principal } from '../auth/authenticator.js';
import { parseInput, uuidText, validateParams, validateQuery } from '../http/validation.js';
import { streamRun } from '../runs/stream.js';

const RunPath = v.object({ id: uuidText });
/** A Redis stream entry id, as sent in each event's `id:` line. */
const eventId = v.pipe(v.string(), v.regex(/^\d{1,20}-\d{1,20}$/, 'String should be an event id like 1700000000000-0'));
const EventsQuery = v.object({ after: v.optional(eventId) });
const EventsHeaders = v.object({ 'last-event-id': v.optional(eventId) });

/**
 * A run after its POST: read it, join its event stream from anywhere (from the start or after
 * the last event a client saw), cancel it. Same scope as the chat endpoints; owner only.
 */
export function runRoutes({ authenticator, runs, relay, openStreams }: Services): Router {
  const router = new Router({ prefix: '/api/runs' });
  const chat = guard(authenticator, { scope: 'chat' });
  const userId = (state: Record<string, unknown>) => (state.principal as Principal).user.id;

  router.get('/:id', chat, async (ctx) => {
    const { id } = validateParams(ctx, RunPath);
    ctx.body = (await runs.ownRun(userId(ctx.state), id)).toPublic();
  });

  router.get('/:id/events', chat, async (ctx) => {
    const { id } = validateParams(ctx, RunPath);
    const header = ctx.get('last-event-id');
    const { 'last-event-id': lastEventId } = parseInput(EventsHeaders, header ? { 'last-event-id': header } : {}, 'header');
    const { after } = validateQuery(ctx, EventsQuery);
    const run = await runs.joinableRun(userId(ctx.state), id);
    await streamRun(ctx, relay, openStreams, run, lastEventId ?? after ?? '0-0');
  });

  router.post('/:id/cancel', chat, async (ctx) => {
    const { id } = validateParams(ctx, RunPath);
    const run = await runs.cancel(userId(ctx.state), id);
    ctx.status = 202;
    ctx.body = { run_id: run.id, status: 'cancelling' };
  });

  return router;
}
