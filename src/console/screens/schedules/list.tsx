import { useState } from 'preact/hooks';
import { must } from '../../api';
import { useConsole } from '../../context';
import { useLoad } from '../../ui/async';
import { LoadedView, Screen, Table, When } from '../../ui/parts';
import { Badge, excerpt } from '../account/parts';
import { Pager } from '../../ui/pager';
import { ScheduleForm, timingOf, type Schedule } from './form';

export function ScheduleList() {
  const { api } = useConsole();
  const [page, setPage] = useState(1);
  const [formKey, setFormKey] = useState(0);
  const schedules = useLoad(() => must(api.GET('/api/schedules', { params: { query: { page, size: 20 } } })), [page]);
  return (
    <Screen title="Schedules">
      <p class="muted">A schedule asks its question on a cron or an interval, as a background run (webhooks, limits and budgets apply).</p>
      <LoadedView loaded={schedules}>
        {(data) => (
          <>
            <div class="table-scroll">
              <Table<Schedule>
                caption="Your schedules"
                rows={data.items}
                rowKey={(s) => s.id}
                empty="You have no schedules yet."
                columns={[
                  {
                    header: 'Schedule',
                    cell: (s) => (
                      <div>
                        <a href={`#/schedules/${s.id}`}>{s.name}</a>
                        <div class="muted small">{excerpt(s.q, 70)}</div>
                      </div>
                    ),
                  },
                  { header: 'Timing', cell: (s) => <span class="small">{timingOf(s)}</span> },
                  { header: 'State', cell: (s) => (s.enabled ? <Badge tone="ok">enabled</Badge> : <Badge tone="waiting">paused</Badge>) },
                  { header: 'Next run', cell: (s) => <When at={s.next_run_at} /> },
                  {
                    header: 'Last run',
                    cell: (s) => (
                      <div class="small">
                        <When at={s.last_run_at} />
                        {s.skipped_runs > 0 && (
                          <div class="muted">
                            {s.skipped_runs} skipped{s.last_skip_reason ? ` (last: ${s.last_skip_reason.replace(/_/g, ' ')})` : ''}
                          </div>
                        )}
                      </div>
                    ),
                  },
                ]}
              />
            </div>
            <Pager page={data.page} pages={data.pages} total={data.total} onPage={setPage} label="Pages of schedules" noun={{ one: 'schedule', many: 'schedules' }} />
          </>
        )}
      </LoadedView>
      <ScheduleForm
        key={formKey}
        title="New schedule"
        submitLabel="Create schedule"
        onSubmit={async (fields) => {
          const created = await must(api.POST('/api/schedules', { body: fields }));
          setFormKey((n) => n + 1);
          setPage(1);
          schedules.reload();
          return created;
        }}
      />
    </Screen>
  );
}
