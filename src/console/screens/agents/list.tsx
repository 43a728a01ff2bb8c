import { useState } from 'preact/hooks';
import { must } from '../../api';
import { useConsole } from '../../context';
import { useLoad } from '../../ui/async';
import { LoadedView, Screen, Table, When } from '../../ui/parts';
import { PAGE_SIZE, Pager } from '../../ui/pager';
import { chatWithAgent, modelLabel } from './names';
import '../builder/builder.css';
import './agents.css';

export function AgentList() {
  const { api } = useConsole();
  const [page, setPage] = useState(1);
  const loaded = useLoad(() => must(api.GET('/api/agents', { params: { query: { page, size: PAGE_SIZE } } })), [page]);
  return (
    <Screen
      title="Agents"
      actions={
        <div class="actions">
          <a class="button secondary" href="#/chat">
            Open the chat
          </a>
          <a class="button" href="#/agents/new">
            New agent
          </a>
        </div>
      }
    >
      <LoadedView loaded={loaded}>
        {(data) => (
          <>
            <Table
              caption="Your agents"
              rows={data.items}
              rowKey={(agent) => agent.id}
              empty="No agents yet: create one to give the chat its model, tools and knowledge."
              columns={[
                { header: 'Name', cell: (agent) => <a href={`#/agents/${agent.id}`}>{agent.name}</a> },
                { header: 'Model', cell: (agent) => (agent.model ? <code>{agent.model}</code> : <span class="muted">{modelLabel(null)}</span>) },
                { header: 'Tools', cell: (agent) => agent.tools.join(', ') || <span class="muted">none</span> },
                { header: 'Knowledge bases', cell: (agent) => agent.knowledge_base_ids.length },
                { header: 'Connectors', cell: (agent) => agent.connector_ids.length },
                { header: 'Version', cell: (agent) => agent.version },
                { header: 'Updated', cell: (agent) => <When at={agent.updated_at} /> },
                {
                  header: 'Chat',
                  cell: (agent) => (
                    <a href={chatWithAgent(agent.id)} aria-label={`Open the chat with ${agent.name}`}>
                      Open the chat
                    </a>
                  ),
                },
              ]}
            />
            <Pager label="Agent pages" page={data.page} pages={data.pages} total={data.total} onPage={setPage} />
          </>
        )}
      </LoadedView>
    </Screen>
  );
}
