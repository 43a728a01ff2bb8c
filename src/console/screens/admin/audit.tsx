import { useState } from 'preact/hooks';
import type { paths } from '../../api/schema';
import { must } from '../../api';
import { useConsole } from '../../context';
import { useLoad } from '../../ui/async';
import { LoadedView, Screen, SelectField, Table, When } from '../../ui/parts';
import { valueOf } from '../../ui/forms';
import { Pager } from '../../ui/pager';
import { useUserNames } from './shared';

type Entry = paths['/api/admin/audit-log']['get']['responses'][200]['content']['application/json']['items'][number];

/** The actions the platform records (DESIGN §9). */
const ACTIONS = [
  'auth.login',
  'auth.login_failed',
  'auth.refresh_reuse',
  'api_key.create',
  'api_key.update',
  'api_key.delete',
  'user.create',
  'user.update',
  'user.role_change',
  'user.disable',
  'user.enable',
  'user.delete',
  'connector.create',
  'connector.update',
  'connector.delete',
  'webhook.create',
  'webhook.update',
  'webhook.delete',
  'webhook.disable',
  'webhook.rotate_secret',
  'model_price.set',
  'model_price.delete',
  'run.cancel',
  'conversation.expire',
  'dashboard.login',
  'dashboard.login_refused',
];

/** The audit log (DESIGN §9), newest first, paged, filtered by action. */
export default function AuditScreen() {
  const { api } = useConsole();
  const { nameOf } = useUserNames();
  const [action, setAction] = useState('');
  const [page, setPage] = useState(1);
  const entries = useLoad(() => must(api.GET('/api/admin/audit-log', { params: { query: { page, size: 25, action: action || undefined } } })), [page, action]);
  return (
    <Screen title="Audit log">
      <div class="row filters" role="search" aria-label="Filter the audit log">
        <SelectField
          label="Action"
          options={[{ value: '', label: 'Every action' }, ...ACTIONS.map((a) => ({ value: a, label: a }))]}
          value={action}
          onChange={(e: Event) => {
            setAction(valueOf(e));
            setPage(1);
          }}
        />
      </div>
      <LoadedView loaded={entries}>
        {(data) => (
          <>
            <div class="table-scroll">
              <Table<Entry>
                caption="Audit entries, newest first"
                rows={data.items}
                rowKey={(entry) => String(entry.id)}
                empty="No entries."
                columns={[
                  { header: 'When', cell: (entry) => <When at={entry.at} /> },
                  { header: 'Action', cell: (entry) => <code class="nowrap">{entry.action}</code> },
                  {
                    header: 'Actor',
                    cell: (entry) => (
                      <div class="small">
                        {nameOf(entry.actor_user_id)}
                        {entry.credential && <div class="muted">via {entry.credential}</div>}
                      </div>
                    ),
                  },
                  {
                    header: 'Target',
                    cell: (entry) => (
                      <div class="small">
                        {entry.target_type ?? '—'}
                        {entry.target_id && <div class="muted">{entry.target_type === 'user' ? nameOf(entry.target_id) : entry.target_id}</div>}
                      </div>
                    ),
                  },
                  { header: 'IP', cell: (entry) => <span class="small">{entry.ip ?? '—'}</span> },
                  {
                    header: 'Details',
                    cell: (entry) => (Object.keys(entry.details).length ? <pre class="details-json">{JSON.stringify(entry.details)}</pre> : <span class="muted">—</span>),
                  },
                ]}
              />
            </div>
            <Pager page={data.page} pages={data.pages} total={data.total} onPage={setPage} label="Pages of entries" noun={{ one: 'entry', many: 'entries' }} />
          </>
        )}
      </LoadedView>
    </Screen>
  );
}
