import * as v from 'valibot';
import { described, instant, uuid } from '../shared/record-schemas.js';
import { AttachmentRecordSchema, type AttachmentRecord } from '../files/records.js';
import type { Conversation, Message } from '../db/models.js';

export const ConversationRecordSchema = v.strictObject({
  id: uuid,
  agent_id: v.nullable(uuid),
  title: v.string(),
  summary: described(v.nullable(v.string()), "The conversation's oldest turns, summarised by its agent's model once the transcript outgrew 80% of the context window (DESIGN §20); null until then. The messages themselves are kept"),
  summary_through: described(v.nullable(uuid), 'The last message the summary covers; later runs extend it from there'),
  metadata: described(v.record(v.string(), v.string()), 'At most 16 string pairs (keys up to 64 characters, values up to 512), as OpenAI\'s; {} when none'),
  created_at: instant,
  updated_at: instant,
});
export type ConversationRecord = v.InferOutput<typeof ConversationRecordSchema>;

export const MessageRecordSchema = v.strictObject({
  id: uuid,
  run_id: v.nullable(uuid),
  role: v.picklist(['user', 'assistant', 'system']),
  content: v.string(),
  injected: v.boolean(),
  citations: described(
    v.array(v.strictObject({ chunk_id: v.string(), document_id: uuid, document_name: v.string(), page: v.nullable(v.number()) })),
    'The knowledge-base passages an answer used; empty for user messages and answers without sources',
  ),
  attachments: described(v.array(AttachmentRecordSchema), 'The images the message was sent with (image_ids)'),
  created_at: instant,
});
export type MessageRecord = v.InferOutput<typeof MessageRecordSchema>;

/** DESIGN §20: one page of a conversation's messages, newest first; the next (older) page is `?before=<next_before>`. */
export const MessagePageSchema = v.strictObject({
  items: v.array(MessageRecordSchema),
  limit: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100)),
  has_more: described(v.boolean(), 'Older messages remain'),
  next_before: described(v.nullable(uuid), 'The `before` of the next (older) page: the oldest message of this one; null when none remain'),
});
export type MessagePage = v.InferOutput<typeof MessagePageSchema>;

/** GET /api/conversations/{id}: the record with its last messages. */
export const ConversationWithMessagesSchema = v.strictObject({
  ...ConversationRecordSchema.entries,
  messages: v.array(MessageRecordSchema),
  has_more_messages: v.pipe(v.boolean(), v.description('Older messages exist: GET /api/conversations/{id}/messages?before=<the first message id>')),
});
export type ConversationWithMessages = v.InferOutput<typeof ConversationWithMessagesSchema>;

export function presentConversation(conversation: Conversation): ConversationRecord {
  return {
    id: conversation.id,
    agent_id: conversation.agent_id,
    title: conversation.title,
    metadata: conversation.metadata ?? {},
    summary: conversation.summary ?? null,
    summary_through: conversation.summary_through ?? null,
    created_at: conversation.created_at.toISOString(),
    updated_at: conversation.updated_at.toISOString(),
  };
}

/** `attachments`: this message's, as history shows them now (a deleted file by its name). */
export function presentMessage(message: Message, attachments: AttachmentRecord[] = []): MessageRecord {
  return {
    id: message.id,
    run_id: message.run_id,
    role: message.role,
    content: message.content,
    injected: message.injected,
    citations: message.citations ?? [],
    attachments,
    created_at: message.created_at.toISOString(),
  };
}
