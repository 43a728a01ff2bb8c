import * as v from 'valibot';
import type { Services } from '../services.js';
import { route, type Route } from '../http/route.js';
import { ConversationRecord, MessageRecord, pageOf } from '../http/openapi-records.js';
import { paginationQuery, uuidText } from '../http/validation.js';

/** Conversations: full access only. */
export function conversationRoutes({ conversations }: Services): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/conversations',
      summary: "List the caller's conversations, most recently active first",
      auth: {},
      responses: { 200: pageOf(ConversationRecord) },
      query: paginationQuery,
      handle: ({ principal, query }) => conversations.list(principal.user.id, query),
    }),
    route({
      method: 'GET',
      path: '/api/conversations/:id',
      summary: 'Read a conversation with its messages in order (injected ones marked)',
      auth: {},
      responses: { 200: v.strictObject({ ...ConversationRecord.entries, messages: v.array(MessageRecord) }) },
      params: v.object({ id: uuidText }),
      handle: ({ principal, params }) => conversations.withMessages(principal.user.id, params.id),
    }),
  ];
}
