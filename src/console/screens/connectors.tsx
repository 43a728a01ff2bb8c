import { useState } from 'preact/hooks';
import { must } from '../api';
import { useConsole } from '../context';
import { useLoad } from '../ui/async';
import { LoadedView, Screen, Table, When } from '../ui/parts';
import { ConfirmButton } from '../ui/confirm';
import { PAGE_SIZE, Pager } from '../ui/pager';
import { ConnectorForm } from './connectors/form';
import { TestButton, TestOutcome, useConnectorTests } from './connectors/test';
import { TRANSPORTS, type Connector } from './connectors/types';
import './builder/builder.css';
import './connectors/connectors.css';

/** '/connectors': MCP tool servers: list, create, edit (header values never shown), test, delete. */
export default function Connectors() {
  const { api } = useConsole();
  const [page, setPage] = useState(1);
  const loaded = useLoad(() => must(api.GET('/api/connectors', { params: { query: { page, size: PAGE_SIZE } } })), [page]);
  const [editing, setEditing] = useState<{ connector?: Connector }>();
  const tests = useConnectorTests(loaded.reload);
  const remove = (connector: Connector) => async () => {
    await must(api.DELETE('/api/connectors/{id}', { params: { path: { id: connector.id } } }));
    if (editing?.connector?.id === connector.id) setEditing(undefined);
    loaded.reload();
  };
  const saved = () => {
    setEditing(undefined);
    loaded.reload();
  };
  return (
    <Screen
      title="Connectors"
      actions={
        <button type="button" onClick={() => setEditing({})} disabled={editing !== undefined && !editing.connector}>
          New connector
        </button>
      }
    >
      <p class="muted">MCP tool servers your agents can call. Header values (tokens, keys) are stored sealed and never shown again.</p>
      {editing && <ConnectorForm key={editing.connector?.id ?? 'new'} connector={editing.connector} onSaved={saved} onCancel={() => setEditing(undefined)} />}
      <LoadedView loaded={loaded}>
        {(data) => (
          <>
            {data.items.map((c) => (
              <TestOutcome key={c.id} connector={c} tests={tests} />
            ))}
            <Table
              caption="Your connectors"
              rows={data.items}
              rowKey={(c) => c.id}
              empty="No connectors yet."
              columns={[
                {
                  header: 'Connector',
                  cell: (c) => (
                    <>
                      <strong>{c.name}</strong> {!c.is_active && <span class="badge">inactive</span>}
                      <div class="mono url">{c.url}</div>
                      {c.description && <div class="muted">{c.description}</div>}
                    </>
                  ),
                },
                { header: 'Transport', cell: (c) => TRANSPORTS.find((t) => t.value === c.transport)?.label ?? c.transport },
                { header: 'Headers', cell: (c) => (c.secret_headers.length ? c.secret_headers.map((name) => <div key={name}>{name}: <span class="muted">set</span></div>) : <span class="muted">none</span>) },
                { header: 'Status', cell: (c) => <ConnectorStatus connector={c} /> },
                { header: 'Tools', cell: (c) => (c.tools.length ? <span title={c.tools.map((t) => t.name).join(', ')}>{c.tools.length}</span> : <span class="muted">—</span>) },
                {
                  header: 'Actions',
                  cell: (c) => (
                    <div class="actions">
                      <TestButton connector={c} tests={tests} />
                      <button type="button" class="secondary" aria-label={`Edit ${c.name}`} onClick={() => setEditing({ connector: c })}>
                        Edit
                      </button>
                      <ConfirmButton label="Delete" question={`Delete ${c.name}? Agents lose its tools.`} onConfirm={remove(c)} />
                    </div>
                  ),
                },
              ]}
            />
            <Pager label="Connector pages" page={data.page} pages={data.pages} total={data.total} onPage={setPage} />
          </>
        )}
      </LoadedView>
    </Screen>
  );
}

function ConnectorStatus({ connector }: { connector: Connector }) {
  return (
    <div class="connector-status">
      <span class={`badge ${connector.status}`}>{connector.status === 'unknown' ? 'not tested' : connector.status}</span>
      {connector.last_checked_at && (
        <small class="muted">
          checked <When at={connector.last_checked_at} />
        </small>
      )}
    </div>
  );
}
