import Router from '@koa/router';
import * as v from 'valibot';
import type { Services } from '../services.js';
import { guard } from '../auth/guard.js';
import type { Principal } from '../auth/authenticator.js';
import { paginate } from '../http/pagination.js';
import { paginationQuery, uuidText, validateParams, validateQuery } from '../http/validation.js';

export function conversationRoutes({ authenticator, models, runs }: Services): Router {
  const router = new Router({ prefix: '/api/conversations' });
  const fullAccess = guard(authenticator, {});
  const userId = (state: Record<string, unknown>) => (state.principal as Principal).user.id;

  router.get('/', fullAccess, async (ctx) => {
    const page = validateQuery(ctx, paginationQuery);
    const query = models.Conversation.query().where({ user_id: userId(ctx.state) }).orderBy([{ column: 'updated_at', order: 'desc' }, 'id']);
    ctx.body = await paginate(query, page, (c) => c.toPublic());
  });

  router.get('/:id', fullAccess, async (ctx) => {
    const { id } = validateParams(ctx, v.object({ id: uuidText }));
    const conversation = await runs.ownConversation(userId(ctx.state), id);
    const messages = await models.Message.query().where({ conversation_id: id }).orderBy('seq');
    ctx.body = { ...conversation.toPublic(), messages: messages.map((m) => m.toPublic()) };
  });

  return router;
}
