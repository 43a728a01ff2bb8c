import { useState } from 'preact/hooks';
import type { components } from '../../api/schema';
import { must } from '../../api';
import { useConsole } from '../../context';
import { useLoad } from '../../ui/async';
import { LoadedView, Table, When } from '../../ui/parts';
import { Badge, excerpt, formatCost, formatNumber, RUN_TONES, totalTokens } from '../account/parts';
import { Pager } from '../../ui/pager';
import { RunLink } from '../runs/links';

type Run = components['schemas']['Run'];

/** A schedule's runs, newest first. */
export function ScheduleRuns({ scheduleId }: { scheduleId: string }) {
  const { api } = useConsole();
  const [page, setPage] = useState(1);
  const runs = useLoad(() => must(api.GET('/api/schedules/{id}/runs', { params: { path: { id: scheduleId }, query: { page, size: 10 } } })), [scheduleId, page]);
  return (
    <section aria-labelledby="schedule-runs-title">
      <div class="screen-header">
        <h2 id="schedule-runs-title">Runs</h2>
        <button type="button" class="secondary" onClick={runs.reload} disabled={runs.loading}>
          Refresh
        </button>
      </div>
      <LoadedView loaded={runs}>
        {(data) => (
          <>
            <div class="table-scroll">
              <Table<Run>
                caption="This schedule's runs, newest first"
                rows={data.items}
                rowKey={(run) => run.id}
                empty="No runs yet."
                columns={[
                  { header: 'Run', cell: (run) => <RunLink id={run.id} /> },
                  { header: 'Started', cell: (run) => <When at={run.created_at} /> },
                  { header: 'Status', cell: (run) => <Badge tone={RUN_TONES[run.status] ?? ''}>{run.status}</Badge> },
                  { header: 'Answer', cell: (run) => <span class="small">{run.error ? run.error.message : excerpt(run.answer, 100)}</span> },
                  { header: 'Tokens', cell: (run) => formatNumber(totalTokens(run.usage)) },
                  { header: 'Cost', cell: (run) => formatCost(run.cost) },
                  { header: 'Conversation', cell: (run) => <a href={`#/conversations/${run.conversation_id}`}>open</a> },
                ]}
              />
            </div>
            <Pager page={data.page} pages={data.pages} total={data.total} onPage={setPage} label="Pages of runs" noun={{ one: 'run', many: 'runs' }} />
          </>
        )}
      </LoadedView>
    </section>
  );
}
