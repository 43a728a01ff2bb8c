import * as v from 'valibot';
import type { Services } from '../services.js';
import { route, type Route } from '../auth/route.js';
import { KnowledgeBaseRecordSchema, presentKnowledgeBase, RetrieveResultSchema } from '../knowledge/records.js';
import { pageOf } from '../shared/record-schemas.js';
import { ValidationError } from '../shared/errors.js';
import { paginationQuery, uuidText } from '../http/validation.js';
import { CHUNK_STRATEGIES, RETRIEVAL_MODES } from '../db/knowledge-models.js';

const name = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(200));
const description = v.pipe(v.string(), v.maxLength(2000));
const integer = (min: number, max: number) => v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));
export const CHUNK_SIZE = { min: 100, max: 8000 };

/** `local` or a gateway model's name as the gateway spells it (no spaces or control characters). */
const modelName = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(200), v.regex(/^[\w.:/@+-]+$/, 'must be a model name such as text-embedding-3-small'));
const dimensions = integer(1, 4096);

const CreateBody = v.strictObject({
  name,
  embedding_model: v.optional(modelName),
  embedding_dimensions: v.optional(dimensions),
  rerank_model: v.optional(v.nullable(modelName)),
  description: v.optional(description, ''),
  chunk_strategy: v.optional(v.picklist(CHUNK_STRATEGIES), 'recursive'),
  chunk_size: v.optional(integer(CHUNK_SIZE.min, CHUNK_SIZE.max), 1000),
  chunk_overlap: v.optional(integer(0, CHUNK_SIZE.max - 1), 200),
  retrieval_mode: v.optional(v.picklist(RETRIEVAL_MODES), 'hybrid'),
});

/** Chunk settings changed here apply to documents added afterwards; a new embedding model re-embeds every chunk. */
const UpdateBody = v.strictObject({
  name: v.optional(name),
  embedding_model: v.optional(modelName),
  embedding_dimensions: v.optional(dimensions),
  rerank_model: v.optional(v.nullable(modelName)),
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
export function knowledgeBaseRoutes({ knowledge }: Services): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/knowledge-bases',
      summary: "List the caller's knowledge bases",
      auth: { scope: 'kb' },
      responses: { 200: pageOf(KnowledgeBaseRecordSchema) },
      query: paginationQuery,
      handle: ({ principal, query }) => knowledge.list(principal.user.id, query),
    }),
    route({
      method: 'POST',
      path: '/api/knowledge-bases',
      summary: 'Create a knowledge base (embedding_model `local` or a gateway model, asked for its dimension once)',
      auth: { writes: true },
      responses: { 201: KnowledgeBaseRecordSchema },
      body: CreateBody,
      status: 201,
      handle: async ({ principal, body }) => {
        assertOverlap(body.chunk_size, body.chunk_overlap);
        return presentKnowledgeBase(await knowledge.create(principal.user.id, body));
      },
    }),
    route({
      method: 'GET',
      path: '/api/knowledge-bases/:id',
      summary: 'Read a knowledge base',
      auth: {},
      responses: { 200: KnowledgeBaseRecordSchema },
      params: KbPath,
      handle: async ({ principal, params }) => presentKnowledgeBase(await knowledge.own(principal.user.id, params.id)),
    }),
    route({
      method: 'PATCH',
      path: '/api/knowledge-bases/:id',
      summary: 'Change a knowledge base (chunk settings apply to documents added afterwards; a new embedding_model re-embeds in a worker while retrieval keeps answering)',
      auth: { writes: true },
      responses: { 200: KnowledgeBaseRecordSchema },
      params: KbPath,
      body: UpdateBody,
      handle: async ({ principal, params, body }) => {
        const current = await knowledge.own(principal.user.id, params.id);
        assertOverlap(body.chunk_size ?? current.chunk_size, body.chunk_overlap ?? current.chunk_overlap);
        return presentKnowledgeBase(await knowledge.update(current, body));
      },
    }),
    route({
      method: 'DELETE',
      path: '/api/knowledge-bases/:id',
      summary: 'Delete a knowledge base with its documents',
      auth: { writes: true },
      responses: { 204: null },
      params: KbPath,
      status: 204,
      handle: ({ principal, params }) => knowledge.remove(principal.user.id, params.id),
    }),
    route({
      method: 'POST',
      path: '/api/knowledge-bases/:id/retrieve',
      summary: 'Search a knowledge base (keyword, semantic or hybrid; reranked when the knowledge base has a rerank_model)',
      auth: { scope: 'kb' },
      responses: { 200: RetrieveResultSchema },
      errors: [502],
      params: KbPath,
      body: RetrieveBody,
      handle: ({ principal, params, body }) => knowledge.retrieve(principal.user.id, params.id, body),
    }),
  ];
}
