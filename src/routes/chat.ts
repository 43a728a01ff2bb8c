import Router from '@koa/router';
import type { Context } from 'koa';
import * as v from 'valibot';
import type { Services } from '../services.js';
import { guard } from '../auth/guard.js';
import type { Principal } from '../auth/authenticator.js';
import type { RunMode } from '../db/models.js';
import { streamRun } from '../runs/stream.js';
import { uuidText, validateBody } from '../http/validation.js';

const optionalText = (max: number) => v.optional(v.nullable(v.pipe(v.string(), v.maxLength(max))));

/** The spec's ChatStreamRequest. image_ids, user_metadata and doc_mode are accepted and not used yet. */
const ChatStreamRequest = v.strictObject({
  q: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(32_000)),
  conversation_id: v.optional(v.nullable(uuidText)),
  agent_id: v.optional(v.nullable(uuidText)),
  token: optionalText(4096),
  image_ids: optionalText(4096),
  user_metadata: optionalText(16_384),
  doc_mode: optionalText(64),
});

const InjectBody = v.strictObject({
  conversation_id: uuidText,
  content: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(32_000)),
});

export function chatRoutes({ authenticator, runs, relay, openStreams }: Services): Router {
  const router = new Router({ prefix: '/api' });
  const chat = guard(authenticator, { scope: 'chat', bodyToken: true });

  const stream = (mode: RunMode) => async (ctx: Context) => {
    const body = validateBody(ctx, ChatStreamRequest);
    const principal = ctx.state.principal as Principal;
    const run = await runs.start({
      userId: principal.user.id,
      mode,
      query: body.q,
      conversationId: body.conversation_id,
      agentId: body.agent_id,
    });
    await streamRun(ctx, relay, openStreams, run);
  };

  router.post('/react', chat, stream('react'));
  router.post('/dag', chat, stream('dag'));

  router.post('/chat/inject', guard(authenticator, { scope: 'chat' }), async (ctx) => {
    const { conversation_id, content } = validateBody(ctx, InjectBody);
    await runs.inject((ctx.state.principal as Principal).user.id, conversation_id, content);
    ctx.body = {};
  });

  return router;
}
