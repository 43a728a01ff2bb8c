import { useState } from 'preact/hooks';
import { must } from '../../api';
import { useConsole } from '../../context';
import { navigate } from '../../router';
import { useAction, useLoad } from '../../ui/async';
import { ErrorNotice, LoadedView, Screen, When } from '../../ui/parts';
import { Badge } from '../account/parts';
import { ConfirmButton } from '../../ui/confirm';
import { ScheduleForm, timingOf, type Schedule } from './form';
import { ScheduleRuns } from './runs';

/** One schedule: its timing, pause/resume, Trigger now, edit, delete, and its runs. */
export function ScheduleDetail({ id }: { id: string }) {
  const { api } = useConsole();
  const schedule = useLoad(() => must(api.GET('/api/schedules/{id}', { params: { path: { id } } })), [id]);
  const [runsVersion, setRunsVersion] = useState(0);
  const [triggered, setTriggered] = useState<string>();
  const toggle = useAction(async (current: Schedule) => {
    await must(api.PATCH('/api/schedules/{id}', { params: { path: { id } }, body: { enabled: !current.enabled } }));
    schedule.reload();
  });
  const trigger = useAction(async () => {
    const run = await must(api.POST('/api/schedules/{id}/trigger', { params: { path: { id } } }));
    setTriggered(run.run_id);
    setRunsVersion((n) => n + 1);
  });
  const remove = useAction(async () => {
    await must(api.DELETE('/api/schedules/{id}', { params: { path: { id } } }));
    navigate('/schedules');
  });
  return (
    <Screen title={schedule.data ? `Schedule: ${schedule.data.name}` : 'Schedule'} actions={<a href="#/schedules">← All schedules</a>}>
      <LoadedView loaded={schedule}>
        {(data) => (
          <>
            <div class="panel">
              <dl class="facts">
                <dt>Question</dt>
                <dd>{data.q}</dd>
                <dt>Timing</dt>
                <dd>{timingOf(data)}</dd>
                <dt>State</dt>
                <dd>{data.enabled ? <Badge tone="ok">enabled</Badge> : <Badge tone="waiting">paused</Badge>}</dd>
                <dt>Next run</dt>
                <dd>
                  <When at={data.next_run_at} />
                </dd>
                <dt>Last run</dt>
                <dd>
                  <When at={data.last_run_at} />
                </dd>
                <dt>Skipped ticks</dt>
                <dd>
                  {data.skipped_runs}
                  {data.last_skip_reason && <span class="muted"> (last: {data.last_skip_reason.replace(/_/g, ' ')})</span>}
                </dd>
              </dl>
              <div class="row actions-row">
                <button type="button" onClick={() => void trigger.run()} disabled={trigger.busy}>
                  Trigger now
                </button>
                <button type="button" class="secondary" onClick={() => void toggle.run(data)} disabled={toggle.busy}>
                  {data.enabled ? 'Pause' : 'Resume'}
                </button>
                <ConfirmButton label="Delete" confirmLabel="Yes, delete" question="Delete this schedule? Its runs stay." onConfirm={() => remove.run()} />
              </div>
              {triggered && (
                <p class="notice" role="status">
                  Run <code>{triggered.slice(0, 8)}</code> started; it appears among the runs below.
                </p>
              )}
              <ErrorNotice error={trigger.error ?? toggle.error ?? remove.error} />
            </div>
            <ScheduleRuns key={runsVersion} scheduleId={id} />
            <ScheduleForm
              key={data.updated_at}
              title="Edit schedule"
              initial={data}
              submitLabel="Save changes"
              onSubmit={async (fields) => {
                await must(api.PATCH('/api/schedules/{id}', { params: { path: { id } }, body: fields }));
                schedule.reload();
              }}
            />
          </>
        )}
      </LoadedView>
    </Screen>
  );
}
