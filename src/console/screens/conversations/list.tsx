import { useState } from 'preact/hooks';
import { must } from '../../api';
import { useConsole } from '../../context';
import { useLoad } from '../../ui/async';
import { LoadedView, Screen, Table, When } from '../../ui/parts';
import { PAGE_SIZE, Pager } from '../../ui/pager';
import { useAgentNames } from './agent-names';
import '../builder/builder.css';
import './conversations.css';

export function ConversationList() {
  const { api } = useConsole();
  const [page, setPage] = useState(1);
  const loaded = useLoad(() => must(api.GET('/api/conversations', { params: { query: { page, size: PAGE_SIZE } } })), [page]);
  const agentName = useAgentNames();
  return (
    <Screen title="Conversations" actions={<a class="button" href="#/chat">New chat</a>}>
      <LoadedView loaded={loaded}>
        {(data) => (
          <>
            <Table
              caption="Your conversations, most recently active first"
              rows={data.items}
              rowKey={(c) => c.id}
              empty="No conversations yet: start one in the chat."
              columns={[
                { header: 'Title', cell: (c) => <a href={`#/conversations/${c.id}`}>{c.title || 'Untitled conversation'}</a> },
                { header: 'Agent', cell: (c) => agentName(c.agent_id) },
                { header: 'Updated', cell: (c) => <When at={c.updated_at} /> },
              ]}
            />
            <Pager label="Conversation pages" page={data.page} pages={data.pages} total={data.total} onPage={setPage} />
          </>
        )}
      </LoadedView>
    </Screen>
  );
}
