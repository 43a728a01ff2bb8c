import type { Conversation, Message, Models } from '../db/models.js';
import { findOwned } from '../db/owned.js';
import { paginate, type Page } from '../db/pagination.js';
import type { Pagination } from '../http/validation.js';
import type { FileService } from '../files/service.js';
import { NotFoundError, ValidationError } from '../shared/errors.js';
import { presentConversation, presentMessage, type ConversationRecord as ConversationView, type ConversationWithMessages, type MessageRecord as MessageView, type MessagePage } from './records.js';

/** Most messages `GET /api/conversations/{id}` returns (the last ones); the rest are paged (DESIGN §20). */
export const CONVERSATION_MESSAGES = 100;
/** A conversation's metadata, as OpenAI's: at most this many pairs, keys and values at most this long. */
export const METADATA_LIMITS = { pairs: 16, keyLength: 64, valueLength: 512 } as const;

/** `GET /api/conversations` filters (DESIGN §20): the conversation's agent, and metadata pairs it must all have. */
export interface ConversationFilters {
  agent_id?: string;
  metadata?: Record<string, string>;
}

export interface ConversationChanges {
  title?: string;
  /** Replaces the whole metadata; null clears it. */
  metadata?: Record<string, string> | null;
}

/** A user's conversations and their messages (injected ones marked). */
export class ConversationService {
  constructor(
    private readonly models: Models,
    private readonly files: Pick<FileService, 'views'>,
  ) {}

  /**
   * Most recently active first. Every statement is bounded by the user: `agent_id` and the
   * metadata containment are filters on the user's rows (the GIN index on metadata is ANDed with
   * the user's index by the planner when it pays); the filter values travel as bindings only.
   */
  list(userId: string, query: Pagination & ConversationFilters): Promise<Page<ConversationView>> {
    const rows = this.models.Conversation.query().where({ user_id: userId }).orderBy([{ column: 'updated_at', order: 'desc' }, 'id']);
    if (query.agent_id) rows.where('agent_id', query.agent_id);
    if (query.metadata && Object.keys(query.metadata).length > 0) rows.whereRaw('metadata @> ?::jsonb', [JSON.stringify(query.metadata)]);
    return paginate(rows, query, presentConversation);
  }

  own(userId: string, id: string): Promise<Conversation> {
    return findOwned(this.models.Conversation, userId, id, 'Conversation');
  }

  /** The record with its last CONVERSATION_MESSAGES messages, oldest first; `has_more_messages` when older ones exist (page them). */
  async withMessages(userId: string, id: string): Promise<ConversationWithMessages> {
    const conversation = await this.own(userId, id);
    const newest = await this.newestFirst(id, CONVERSATION_MESSAGES + 1);
    const has_more_messages = newest.length > CONVERSATION_MESSAGES;
    const messages = await this.present(userId, newest.slice(0, CONVERSATION_MESSAGES).reverse());
    return { ...presentConversation(conversation), messages, has_more_messages };
  }

  /**
   * One page of the conversation's messages, newest first, older than `before` (a message of this
   * conversation, else 422 naming `before`). Keyset paging on (conversation_id, seq): every page
   * costs the same however long the conversation is.
   */
  async messages(userId: string, id: string, page: { before?: string; limit: number }): Promise<MessagePage> {
    await this.own(userId, id);
    let beforeSeq: string | number | undefined;
    if (page.before) {
      const anchor = await this.models.Message.query().select('seq').findOne({ id: page.before, conversation_id: id });
      if (!anchor) {
        throw new ValidationError([{ loc: ['query', 'before'], msg: 'Value error, before must be the id of a message of this conversation', type: 'value_error', input: page.before }]);
      }
      beforeSeq = anchor.seq;
    }
    const rows = await this.newestFirst(id, page.limit + 1, beforeSeq);
    const has_more = rows.length > page.limit;
    const items = rows.slice(0, page.limit);
    return { items: await this.present(userId, items), limit: page.limit, has_more, next_before: has_more ? (items.at(-1)?.id ?? null) : null };
  }

  /** PATCH: a new title, new metadata (replacing the old; null clears it), or both. A change counts as activity (updated_at). */
  async update(userId: string, id: string, changes: ConversationChanges): Promise<ConversationView> {
    const conversation = await this.own(userId, id);
    const patch: Partial<Pick<Conversation, 'title' | 'metadata' | 'updated_at'>> = { updated_at: new Date() };
    if (changes.title !== undefined) patch.title = changes.title;
    if (changes.metadata !== undefined) patch.metadata = changes.metadata ?? {};
    const updated = await conversation.$query().patchAndFetch(patch);
    // Deleted meanwhile (DELETE, or the retention job).
    if (!updated) throw new NotFoundError('Conversation not found', 'Conversation');
    return presentConversation(updated);
  }

  private async newestFirst(conversationId: string, limit: number, beforeSeq?: string | number): Promise<Message[]> {
    const query = this.models.Message.query().where({ conversation_id: conversationId }).orderBy('seq', 'desc').limit(limit);
    if (beforeSeq !== undefined) query.where('seq', '<', beforeSeq);
    return query;
  }

  private async present(userId: string, messages: Message[]): Promise<MessageView[]> {
    const attachments = await this.files.views(userId, messages.map((m) => m.attachments ?? []));
    return messages.map((m, i) => presentMessage(m, attachments[i]));
  }
}
