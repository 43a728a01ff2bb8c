import { useEffect, useRef } from 'preact/hooks';
import { must } from '../api';
import { useConsole } from '../context';
import { routeParts } from '../router';
import { useAction, useLoad } from '../ui/async';
import { ErrorNotice, Screen } from '../ui/parts';
import { Composer } from './chat/composer';
import { ActiveRunControls } from './chat/controls';
import { MessageView } from './chat/messages';
import { RunCard } from './chat/run-view';
import { useChat } from './chat/use-chat';
import './chat/chat.css';

/**
 * Chat with an agent (DESIGN §17): `/chat` starts a conversation, `/chat/agent/{agent id}` starts one
 * with that agent chosen ("Open the chat" on an agent), `/chat/{id}` continues one.
 * A run streams into the transcript as it happens and survives a dropped connection or a reload.
 */
export default function Chat({ route }: { route: string }) {
  const { api } = useConsole();
  const [first, second] = routeParts(route, '/chat');
  const conversationId = first === 'agent' ? undefined : first;
  const chat = useChat(conversationId, first === 'agent' ? second : undefined);
  const agents = useLoad(() => must(api.GET('/api/agents', { params: { query: { size: 100 } } })), []);
  const older = useAction(chat.loadOlder);
  const end = useFollowBottom(chat.transcript);
  const { transcript, activeRun } = chat;
  return (
    <Screen
      title="Chat"
      actions={
        <a class="button-link" href="#/chat">
          New conversation
        </a>
      }
    >
      <p class="muted conversation-title">{chat.conversation ? chat.conversation.title || 'Untitled conversation' : conversationId ? '' : 'A new conversation'}</p>
      <ErrorNotice error={agents.error} />
      {chat.loadingHistory && <p aria-busy="true">Loading the conversation…</p>}
      <div class="transcript" aria-label="Transcript" role="log" aria-live="off">
        {transcript.droppedEntries > 0 && <p class="muted small">{transcript.droppedEntries} earlier entries are no longer shown.</p>}
        {transcript.olderBefore && (
          <button type="button" class="secondary" disabled={older.busy} onClick={() => void older.run()}>
            Load older messages
          </button>
        )}
        <ErrorNotice error={older.error} />
        {transcript.entries.map((entry) => (entry.kind === 'message' ? <MessageView key={entry.key} message={entry} /> : <RunCard key={entry.key} run={entry.run} onDecide={chat.decide} />))}
        {!chat.loadingHistory && transcript.entries.length === 0 && <p class="empty">No messages yet. Ask something below.</p>}
        <div ref={end} />
      </div>
      <ErrorNotice error={chat.error} />
      {activeRun && !activeRun.done && <ActiveRunControls onInject={chat.inject} onCancel={chat.cancel} reconnecting={chat.reconnecting} />}
      <Composer
        agents={agents.data?.items ?? []}
        agentId={chat.agentId}
        onAgent={chat.setAgentId}
        mode={chat.mode}
        onMode={chat.setMode}
        docMode={chat.docMode}
        onDocMode={chat.setDocMode}
        busy={Boolean(activeRun && !activeRun.done)}
        onSend={chat.send}
      />
    </Screen>
  );
}

/** Keeps the newest text in view while it streams, unless the reader scrolled up. */
function useFollowBottom(watched: unknown) {
  const end = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const nearBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 240;
    if (nearBottom) end.current?.scrollIntoView({ block: 'end' });
  }, [watched]);
  return end;
}
