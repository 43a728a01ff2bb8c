import { useState } from 'preact/hooks';
import type { paths } from '../../api/schema';
import { must } from '../../api';
import { useConsole } from '../../context';
import { useAction, useLoad } from '../../ui/async';
import { ErrorNotice, LoadedView, Screen, SelectField, Table, When } from '../../ui/parts';
import { Badge, excerpt, formatCost, formatNumber, RUN_TONES, totalTokens } from '../account/parts';
import { valueOf } from '../../ui/forms';
import { Pager } from '../../ui/pager';
import { ConfirmButton } from '../../ui/confirm';
import { useUserNames } from './shared';
import { RunLink } from '../runs/links';
import { FINAL_RUN_STATUSES, RUN_STATUSES } from '../../../shared/run-statuses.js';

type RunQuery = NonNullable<paths['/api/admin/runs']['get']['parameters']['query']>;
type AdminRun = paths['/api/admin/runs']['get']['responses'][200]['content']['application/json']['items'][number];
const STATUSES = RUN_STATUSES;
const ACTIVE = new Set(RUN_STATUSES.filter((status) => !(FINAL_RUN_STATUSES as readonly string[]).includes(status)));

/** Runs across users (DESIGN §9), newest first, filtered by status and user; an active run can be cancelled. */
export default function AdminRunsScreen() {
  const { api } = useConsole();
  const { users, nameOf } = useUserNames();
  const [status, setStatus] = useState('');
  const [userId, setUserId] = useState('');
  const [page, setPage] = useState(1);
  const runs = useLoad(
    () => must(api.GET('/api/admin/runs', { params: { query: { page, size: 25, status: (status || undefined) as RunQuery['status'], user_id: userId || undefined } } })),
    [page, status, userId],
  );
  const cancel = useAction(async (run: AdminRun) => {
    await must(api.POST('/api/admin/runs/{id}/cancel', { params: { path: { id: run.id } } }));
    runs.reload();
  });
  return (
    <Screen
      title="Runs"
      actions={
        <button type="button" class="secondary" onClick={runs.reload} disabled={runs.loading}>
          Refresh
        </button>
      }
    >
      <div class="row filters" role="search" aria-label="Filter runs">
        <SelectField
          label="Status"
          options={[{ value: '', label: 'Any status' }, ...STATUSES.map((s) => ({ value: s, label: s }))]}
          value={status}
          onChange={(e: Event) => {
            setStatus(valueOf(e));
            setPage(1);
          }}
        />
        <SelectField
          label="User"
          options={[{ value: '', label: 'Every user' }, ...users.map((user) => ({ value: user.id, label: user.email }))]}
          value={userId}
          onChange={(e: Event) => {
            setUserId(valueOf(e));
            setPage(1);
          }}
        />
      </div>
      <ErrorNotice error={cancel.error} />
      <LoadedView loaded={runs}>
        {(data) => (
          <>
            <div class="table-scroll">
              <Table<AdminRun>
                caption="Runs, newest first"
                rows={data.items}
                rowKey={(run) => run.id}
                empty="No run matches."
                columns={[
                  { header: 'Run', cell: (run) => <RunLink id={run.id} /> },
                  { header: 'Created', cell: (run) => <When at={run.created_at} /> },
                  { header: 'User', cell: (run) => <span class="small">{nameOf(run.user_id)}</span> },
                  {
                    header: 'Status',
                    cell: (run) => (
                      <div>
                        <Badge tone={RUN_TONES[run.status] ?? ''}>{run.status}</Badge>
                        <div class="muted small">
                          {run.mode}
                          {run.schedule_id ? ' · scheduled' : ''}
                        </div>
                      </div>
                    ),
                  },
                  {
                    header: 'Question',
                    cell: (run) => (
                      <div class="small">
                        {run.query === null ? <span class="muted">(conversation deleted)</span> : excerpt(run.query, 90)}
                        {run.error && <div class="muted">{run.error.code}: {excerpt(run.error.message, 90)}</div>}
                      </div>
                    ),
                  },
                  { header: 'Tokens', cell: (run) => formatNumber(totalTokens(run.usage)) },
                  { header: 'Cost', cell: (run) => formatCost(run.cost) },
                  { header: 'Duration', cell: (run) => duration(run) },
                  {
                    header: 'Actions',
                    cell: (run) => (ACTIVE.has(run.status) ? <ConfirmButton label="Cancel run" confirmLabel="Yes, cancel run" question="Cancel this run?" onConfirm={() => cancel.run(run)} /> : null),
                  },
                ]}
              />
            </div>
            <Pager page={data.page} pages={data.pages} total={data.total} onPage={setPage} label="Pages of runs" noun={{ one: 'run', many: 'runs' }} />
          </>
        )}
      </LoadedView>
    </Screen>
  );
}

function duration(run: AdminRun): string {
  if (!run.started_at || !run.finished_at) return '—';
  const ms = new Date(run.finished_at).getTime() - new Date(run.started_at).getTime();
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}
