import * as v from 'valibot';
import type { Services } from '../services.js';
import { route, type Route } from '../auth/route.js';
import { ConversationRecordSchema, ConversationWithMessagesSchema, MessagePageSchema } from '../conversations/records.js';
import { pageOf } from '../shared/record-schemas.js';
import { integerText, paginationQuery, uuidText } from '../http/validation.js';
import { METADATA_LIMITS } from '../conversations/service.js';

const { pairs, keyLength, valueLength } = METADATA_LIMITS;
const ConversationPath = v.object({ id: uuidText });

/** DESIGN §20: a flat object of at most 16 string pairs, as OpenAI's; null clears it. Each bad pair is named. */
const metadata = v.nullable(
  v.pipe(
    v.intersect([
      v.record(v.pipe(v.string(), v.minLength(1), v.maxLength(keyLength)), v.pipe(v.string(), v.maxLength(valueLength))),
      // valibot's record takes a list as an object of its indexes.
      v.custom<Record<string, string>>((input) => !Array.isArray(input), 'metadata must be an object of string pairs, not a list'),
    ]),
    v.check((pairsGiven) => Object.keys(pairsGiven).length <= pairs, `metadata may have at most ${pairs} key-value pairs`),
  ),
);

const PatchBody = v.pipe(
  v.strictObject({ title: v.optional(v.pipe(v.string(), v.maxLength(512))), metadata: v.optional(metadata) }),
  v.check((body) => body.title !== undefined || body.metadata !== undefined, 'send title, metadata or both'),
);

/** `metadata[key]=value`, as a query string carries it (Koa's parser keeps the brackets in the name). */
const METADATA_PARAMETER = /^metadata\[(.*)\]$/s;

/**
 * The list's query: page and size, `agent_id`, and `metadata[key]=value` pairs (each key once, at
 * most 16) gathered into one object that reaches SQL only as a bound JSON value. Every bad one is
 * named; other parameters are ignored, as on every list.
 */
const ListQuery = v.pipe(
  v.looseObject({ ...paginationQuery.entries, agent_id: v.optional(uuidText) }),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const { page, size, agent_id, ...rest } = dataset.value;
    const found: [string, string][] = [];
    const named = (key: string, message: string, value: unknown) =>
      addIssue({ message, path: [{ type: 'object', origin: 'value', input: dataset.value, key, value }] });
    for (const [name, value] of Object.entries(rest)) {
      if (!name.startsWith('metadata')) continue;
      const key = METADATA_PARAMETER.exec(name)?.[1];
      if (key === undefined || key.length === 0 || key.length > keyLength) named(name, `filter by metadata as metadata[key]=value, the key 1-${keyLength} characters`, value);
      else if (typeof value !== 'string') named(name, 'each metadata key may be given once', value);
      else if (value.length > valueLength) named(name, `a metadata value has at most ${valueLength} characters`, value);
      else found.push([key, value]);
    }
    if (found.length > pairs) named('metadata', `at most ${pairs} metadata filters may be given; ${found.length} were`, Object.fromEntries(found));
    if (dataset.issues || found.length > pairs) return NEVER;
    return { page, size, ...(agent_id ? { agent_id } : {}), ...(found.length > 0 ? { metadata: Object.fromEntries(found) } : {}) };
  }),
);

const MessagesQuery = v.object({
  before: v.optional(uuidText),
  limit: v.optional(integerText({ min: 1, max: 100 }), '50'),
});

/** Conversations: full access only. */
export function conversationRoutes({ conversations, conversationEraser }: Services): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/conversations',
      summary: "List the caller's conversations, most recently active first; filter by agent_id and by metadata[key]=value (repeatable, up to 16, all must match)",
      auth: {},
      responses: { 200: pageOf(ConversationRecordSchema) },
      query: ListQuery,
      handle: ({ principal, query }) => conversations.list(principal.user.id, query),
    }),
    route({
      method: 'GET',
      path: '/api/conversations/:id',
      summary: 'Read a conversation with its last 100 messages, oldest first (injected ones marked); page older ones with GET /api/conversations/{id}/messages',
      auth: {},
      responses: {
        200: ConversationWithMessagesSchema,
      },
      errors: [404],
      params: ConversationPath,
      handle: ({ principal, params }) => conversations.withMessages(principal.user.id, params.id),
    }),
    route({
      method: 'GET',
      path: '/api/conversations/:id/messages',
      summary: "A page of the conversation's messages, newest first: limit 1-100 (default 50), before = a message id of this conversation (the previous page's next_before)",
      auth: {},
      responses: { 200: MessagePageSchema },
      errors: [404],
      params: ConversationPath,
      query: MessagesQuery,
      handle: ({ principal, params, query }) => conversations.messages(principal.user.id, params.id, query),
    }),
    route({
      method: 'PATCH',
      path: '/api/conversations/:id',
      summary: 'Rename a conversation or set its metadata (up to 16 string pairs, replacing the old; null clears it)',
      auth: {},
      responses: { 200: ConversationRecordSchema },
      errors: [404],
      params: ConversationPath,
      body: PatchBody,
      handle: ({ principal, params, body }) => conversations.update(principal.user.id, params.id, body),
    }),
    route({
      method: 'DELETE',
      path: '/api/conversations/:id',
      summary: "Delete a conversation for good: its messages and its runs' event streams; its runs stay for usage, without content. 409 while a run is active",
      auth: {},
      responses: { 204: null },
      errors: [404, 409],
      params: ConversationPath,
      status: 204,
      handle: ({ principal, params }) => conversationEraser.remove(principal.user.id, params.id),
    }),
  ];
}
