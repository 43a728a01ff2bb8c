import type { Conversation, Message, Models } from '../db/models.js';
import { findOwned, listOwned } from '../db/owned.js';
import type { Pagination } from '../http/validation.js';
import type { FileService } from '../files/service.js';

/** A user's conversations and their messages (injected ones marked), oldest first. */
export class ConversationService {
  constructor(
    private readonly models: Models,
    private readonly files: Pick<FileService, 'views'>,
  ) {}

  list(userId: string, page: Pagination) {
    return listOwned(this.models.Conversation, userId, page, (conversation) => conversation.toPublic(), 'updated_at');
  }

  own(userId: string, id: string): Promise<Conversation> {
    return findOwned(this.models.Conversation, userId, id, 'Conversation');
  }

  async withMessages(userId: string, id: string): Promise<ReturnType<Conversation['toPublic']> & { messages: ReturnType<Message['toPublic']>[] }> {
    const conversation = await this.own(userId, id);
    const messages = await this.models.Message.query().where({ conversation_id: id }).orderBy('seq');
    const attachments = await this.files.views(userId, messages.map((m) => m.attachments ?? []));
    return { ...conversation.toPublic(), messages: messages.map((m, i) => m.toPublic(attachments[i])) };
  }
}
