import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import type { components } from '../../api/schema';
import { must } from '../../api';
import { useConsole } from '../../context';
import { navigate } from '../../router';
import { useAction, useLoad } from '../../ui/async';
import { ErrorNotice, LoadedView, Screen, When } from '../../ui/parts';
import { ConfirmButton } from '../../ui/confirm';
import { useAgentNames } from './agent-names';
import { RenameConversation } from './rename';
import { Citations, Images } from '../../ui/attachments';
import '../builder/builder.css';
import './conversations.css';
import { runHref } from '../runs/links';

type Message = components['schemas']['Message'];
const OLDER_PAGE = 50;

/** One conversation: its facts, its last messages and older ones on demand, continue in the chat, delete. */
export function ConversationView({ id }: { id: string }) {
  const { api } = useConsole();
  const loaded = useLoad(() => must(api.GET('/api/conversations/{id}', { params: { path: { id } } })), [id]);
  const agentName = useAgentNames();
  const title = loaded.data ? loaded.data.title || 'Untitled conversation' : 'Conversation';
  const remove = async () => {
    await must(api.DELETE('/api/conversations/{id}', { params: { path: { id } } }));
    navigate('/conversations');
  };
  return (
    <Screen
      title={title}
      actions={
        <div class="actions">
          <a class="button" href={`#/chat/${id}`}>
            Continue in chat
          </a>
          <ConfirmButton label="Delete" question="Delete this conversation and all its messages?" confirmLabel="Delete for good" onConfirm={remove} />
        </div>
      }
    >
      <p>
        <a href="#/conversations">← All conversations</a>
      </p>
      <LoadedView loaded={loaded}>
        {(conversation) => (
          <>
            <p>
              <RenameConversation key={conversation.title ?? ''} id={id} title={conversation.title} onRenamed={loaded.reload} />
            </p>
            <dl class="facts panel">
              <dt>Agent</dt>
              <dd>{agentName(conversation.agent_id)}</dd>
              <dt>Started</dt>
              <dd>
                <When at={conversation.created_at} />
              </dd>
              <dt>Updated</dt>
              <dd>
                <When at={conversation.updated_at} />
              </dd>
              {Object.entries(conversation.metadata).map(([key, value]) => (
                <Fragment key={key}>
                  <dt>{key}</dt>
                  <dd>{value}</dd>
                </Fragment>
              ))}
              {conversation.summary && (
                <>
                  <dt>Summary of older turns</dt>
                  <dd>{conversation.summary}</dd>
                </>
              )}
            </dl>
            <Messages id={id} latest={conversation.messages} hasMore={conversation.has_more_messages} />
          </>
        )}
      </LoadedView>
    </Screen>
  );
}

/** The messages oldest first; "Show older" pages back through the rest (the API pages newest first). */
function Messages({ id, latest, hasMore }: { id: string; latest: Message[]; hasMore: boolean }) {
  const { api } = useConsole();
  const [older, setOlder] = useState<{ items: Message[]; hasMore: boolean }>({ items: [], hasMore });
  const first = older.items[0] ?? latest[0];
  const loadOlder = useAction(async () => {
    if (!first) return;
    const page = await must(api.GET('/api/conversations/{id}/messages', { params: { path: { id }, query: { before: first.id, limit: OLDER_PAGE } } }));
    setOlder((previous) => ({ items: [...page.items.reverse(), ...previous.items], hasMore: page.has_more }));
  });
  const messages = [...older.items, ...latest];
  if (messages.length === 0) return <p class="empty">No messages yet.</p>;
  return (
    <section aria-labelledby="messages-title">
      <h2 id="messages-title">Messages ({messages.length}{older.hasMore ? '+' : ''})</h2>
      {older.hasMore && (
        <p>
          <button type="button" class="secondary" disabled={loadOlder.busy} onClick={() => void loadOlder.run()}>
            {loadOlder.busy ? 'Loading…' : 'Show older messages'}
          </button>
        </p>
      )}
      <ErrorNotice error={loadOlder.error} />
      <ol class="messages">
        {messages.map((message) => (
          <MessageItem key={message.id} message={message} />
        ))}
      </ol>
    </section>
  );
}

const ROLE_LABEL: Record<Message['role'], string> = { user: 'You', assistant: 'Agent', system: 'System' };

function MessageItem({ message }: { message: Message }) {
  return (
    <li class={`message ${message.role}`}>
      <header>
        <strong>{ROLE_LABEL[message.role]}</strong>
        {message.injected && <span class="badge">injected</span>}
        <When at={message.created_at} />
        {message.role === 'assistant' && message.run_id && <a href={runHref(message.run_id)}>Run page</a>}
      </header>
      <div class="content">{message.content || <span class="muted">(no text)</span>}</div>
      <Images images={message.attachments} />
      <Citations citations={message.citations} />
    </li>
  );
}
