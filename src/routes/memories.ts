import * as v from 'valibot';
import type { Services } from '../services.js';
import { route, type Route } from '../auth/route.js';
import { pageOf } from '../shared/record-schemas.js';
import { paginationQuery, uuidText } from '../http/validation.js';
import { DeletedSchema, MEMORY_MAX_CHARS, MemoryRecordSchema, memoryContent, memoryMetadata, NamespacesSchema, namespaceText } from '../memories/records.js';

const MemoryPath = v.object({ id: uuidText });
const ListQuery = v.object({
  ...paginationQuery.entries,
  namespace: v.optional(namespaceText),
  q: v.optional(v.pipe(v.string(), v.trim(), v.maxLength(MEMORY_MAX_CHARS))),
});
const NamespaceQuery = v.object({ namespace: namespaceText });
const CreateBody = v.strictObject({ namespace: namespaceText, content: memoryContent, metadata: v.optional(v.nullable(memoryMetadata)) });
const UpdateBody = v.pipe(
  v.strictObject({ content: v.optional(memoryContent), metadata: v.optional(v.nullable(memoryMetadata)) }),
  v.check((body) => Object.keys(body).length > 0, 'send content or metadata to change'),
);

/** A user's memories (DESIGN §25): scope `chat`; another user's memory answers 404. */
export function memoryRoutes({ memories }: Services): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/memories',
      summary: 'List your memories, newest first, all or of one namespace; with q, ranked by meaning (closest first, each with its score)',
      auth: { scope: 'chat' },
      responses: { 200: pageOf(MemoryRecordSchema) },
      // A gateway embedding model (MEMORY_EMBEDDING_MODEL) that refuses q: 502; unreachable: 503.
      errors: [502],
      query: ListQuery,
      handle: ({ principal, query }) => memories.list(principal.user.id, { namespace: query.namespace, q: query.q || undefined }, query),
    }),
    route({
      method: 'GET',
      path: '/api/memory-namespaces',
      summary: 'Your namespaces that hold memories ("user", and each agent\'s), with their counts',
      auth: { scope: 'chat' },
      responses: { 200: NamespacesSchema },
      handle: ({ principal }) => memories.namespaces(principal.user.id),
    }),
    route({
      method: 'POST',
      path: '/api/memories',
      summary: 'Add a memory to a namespace ("user" for all your agents, or an agent\'s id)',
      auth: { scope: 'chat', writes: true },
      responses: { 201: MemoryRecordSchema },
      errors: [404, 409, 502],
      body: CreateBody,
      status: 201,
      handle: ({ principal, body }) => memories.create(principal.user.id, body),
    }),
    route({
      method: 'DELETE',
      path: '/api/memories',
      summary: 'Delete every memory of one namespace',
      auth: { scope: 'chat', writes: true },
      responses: { 200: DeletedSchema },
      query: NamespaceQuery,
      handle: ({ principal, query }) => memories.removeNamespace(principal.user.id, query.namespace),
    }),
    route({
      method: 'GET',
      path: '/api/memories/:id',
      summary: 'Read a memory',
      auth: { scope: 'chat' },
      responses: { 200: MemoryRecordSchema },
      errors: [404],
      params: MemoryPath,
      handle: ({ principal, params }) => memories.get(principal.user.id, params.id),
    }),
    route({
      method: 'PATCH',
      path: '/api/memories/:id',
      summary: "Change a memory's content (embedded again) or metadata",
      auth: { scope: 'chat', writes: true },
      responses: { 200: MemoryRecordSchema },
      errors: [404, 502],
      params: MemoryPath,
      body: UpdateBody,
      handle: ({ principal, params, body }) => memories.update(principal.user.id, params.id, body),
    }),
    route({
      method: 'DELETE',
      path: '/api/memories/:id',
      summary: 'Delete a memory',
      auth: { scope: 'chat', writes: true },
      responses: { 204: null },
      errors: [404],
      params: MemoryPath,
      status: 204,
      handle: ({ principal, params }) => memories.remove(principal.user.id, params.id),
    }),
  ];
}
