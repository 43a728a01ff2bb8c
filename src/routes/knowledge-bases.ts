import Router from '@koa/router';
import * as v from 'valibot';
import type { Services } from '../services.js';
import { guard } from '../auth/guard.js';
import type { Principal } from '../auth/authenticator.js';
import { ValidationError } from '../http/errors.js';
import { paginate } from '../http/pagination.js';
import { paginationQuery, uuidText, validateBody, validateParams, validateQuery } from '../http/validation.js';
import { CHUNK_STRATEGIES, RETRIEVAL_MODES } from '../db/knowledge-models.js';

const name = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(200));
const description = v.pipe(v.string(), v.maxLength(2000));
const integer = (min: number, max: number) => v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));
export const CHUNK_SIZE = { min: 100, max: 8000 };

const CreateBody = v.strictObject({
  name,
  description: v.optional(description, ''),
  chunk_strategy: v.optional(v.picklist(CHUNK_STRATEGIES), 'recursive'),
  chunk_size: v.optional(integer(CHUNK_SIZE.min, CHUNK_SIZE.max), 1000),
  chunk_overlap: v.optional(integer(0, CHUNK_SIZE.max - 1), 200),
  retrieval_mode: v.optional(v.picklist(RETRIEVAL_MODES), 'hybrid'),
});

/** Chunk settings changed here apply to documents added afterwards. */
const UpdateBody = v.strictObject({
  name: v.optional(name),
  description: v.optional(description),
  chunk_strategy: v.optional(v.picklist(CHUNK_STRATEGIES)),
  chunk_size: v.optional(integer(CHUNK_SIZE.min, CHUNK_SIZE.max)),
  chunk_overlap: v.optional(integer(0, CHUNK_SIZE.max - 1)),
  retrieval_mode: v.optional(v.picklist(RETRIEVAL_MODES)),
  is_active: v.optional(v.boolean()),
});

const RetrieveBody = v.strictObject({
  query: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(2000)),
  top_k: v.optional(integer(1, 50), 5),
  retrieval_mode: v.optional(v.picklist(RETRIEVAL_MODES)),
  score_threshold: v.optional(v.pipe(v.number(), v.minValue(0))),
});

const KbPath = v.object({ id: uuidText });

function assertOverlap(size: number, overlap: number): void {
  if (overlap >= size) {
    throw new ValidationError([{ loc: ['body', 'chunk_overlap'], msg: `Value error, chunk_overlap (${overlap}) must be less than chunk_size (${size})`, type: 'value_error', input: overlap }]);
  }
}

/** Knowledge bases: scope `kb` lists and retrieves; everything else needs full access (restricted users may not write). */
export function knowledgeBaseRoutes({ authenticator, models, knowledge }: Services): Router {
  const router = new Router({ prefix: '/api/knowledge-bases' });
  const kbScope = guard(authenticator, { scope: 'kb' });
  const read = guard(authenticator, {});
  const write = guard(authenticator, { writes: true });
  const userId = (state: Record<string, unknown>) => (state.principal as Principal).user.id;

  router.get('/', kbScope, async (ctx) => {
    const page = validateQuery(ctx, paginationQuery);
    const query = models.KnowledgeBase.query().where({ user_id: userId(ctx.state) }).orderBy([{ column: 'created_at', order: 'desc' }, 'id']);
    ctx.body = await paginate(query, page, (kb) => kb.toPublic());
  });

  router.post('/', write, async (ctx) => {
    const body = validateBody(ctx, CreateBody);
    assertOverlap(body.chunk_size, body.chunk_overlap);
    ctx.status = 201;
    ctx.body = (await knowledge.create(userId(ctx.state), body)).toPublic();
  });

  router.get('/:id', read, async (ctx) => {
    const { id } = validateParams(ctx, KbPath);
    ctx.body = (await knowledge.own(userId(ctx.state), id)).toPublic();
  });

  router.patch('/:id', write, async (ctx) => {
    const { id } = validateParams(ctx, KbPath);
    const body = validateBody(ctx, UpdateBody);
    const current = await knowledge.own(userId(ctx.state), id);
    assertOverlap(body.chunk_size ?? current.chunk_size, body.chunk_overlap ?? current.chunk_overlap);
    ctx.body = (await knowledge.update(current, body)).toPublic();
  });

  router.delete('/:id', write, async (ctx) => {
    const { id } = validateParams(ctx, KbPath);
    await knowledge.remove(userId(ctx.state), id);
    ctx.status = 204;
  });

  router.post('/:id/retrieve', kbScope, async (ctx) => {
    const { id } = validateParams(ctx, KbPath);
    const body = validateBody(ctx, RetrieveBody);
    ctx.body = await knowledge.retrieve(userId(ctx.state), id, body);
  });

  return router;
}
