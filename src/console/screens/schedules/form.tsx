import { useState } from 'preact/hooks';
import type { components } from '../../api/schema';
import { must } from '../../api';
import { useConsole } from '../../context';
import { useAction, useLoad } from '../../ui/async';
import { ErrorNotice, Field, SelectField, TextAreaField } from '../../ui/parts';
import { Check } from '../account/parts';
import { labelledError, valueOf } from '../../ui/forms';
import { DEFAULT_AGENT_LABEL } from '../agents/names';

export type Schedule = components['schemas']['Schedule'];
type Timing = 'cron' | 'every';

export interface ScheduleFields {
  name?: string;
  agent_id: string | null;
  mode: 'react' | 'dag';
  q: string;
  cron: string | null;
  every_seconds: number | null;
  timezone: string;
  enabled: boolean;
}

/** The API's field names as this form labels them, for its 422s. */
const LABELS: Record<string, string> = {
  name: 'Schedule name',
  agent_id: 'Agent',
  mode: 'Mode',
  q: 'Question',
  cron: 'Cron expression',
  every_seconds: 'Interval (seconds)',
  timezone: 'Time zone',
  enabled: 'Enabled',
  request: 'Schedule',
};

const ZONES: string[] = (Intl as unknown as { supportedValuesOf?: (key: string) => string[] }).supportedValuesOf?.('timeZone') ?? ['UTC'];
const ZONE_OPTIONS = (ZONES.includes('UTC') ? ZONES : ['UTC', ...ZONES]).map((zone) => ({ value: zone, label: zone }));

/** The fields of a schedule to create or change: agent, question, a cron in a time zone or an interval, enabled. */
export function ScheduleForm({ title, initial, submitLabel, onSubmit }: { title: string; initial?: Schedule; submitLabel: string; onSubmit: (fields: ScheduleFields) => Promise<unknown> }) {
  const { api } = useConsole();
  const agents = useLoad(() => must(api.GET('/api/agents', { params: { query: { size: 100 } } })), []);
  const [name, setName] = useState(initial?.name ?? '');
  const [agentId, setAgentId] = useState(initial?.agent_id ?? '');
  const [mode, setMode] = useState<'react' | 'dag'>(initial?.mode ?? 'react');
  const [q, setQ] = useState(initial?.q ?? '');
  const [timing, setTiming] = useState<Timing>(initial?.every_seconds ? 'every' : 'cron');
  const [cron, setCron] = useState(initial?.cron ?? '0 9 * * 1-5');
  const [every, setEvery] = useState(initial?.every_seconds?.toString() ?? '3600');
  const [timezone, setTimezone] = useState(initial?.timezone ?? 'UTC');
  const [enabled, setEnabled] = useState(initial?.enabled ?? true);
  const submit = useAction(() =>
    onSubmit({
      ...(name.trim() ? { name: name.trim() } : {}),
      agent_id: agentId || null,
      mode,
      q,
      cron: timing === 'cron' ? cron : null,
      every_seconds: timing === 'every' ? Number(every) : null,
      timezone,
      enabled,
    }),
  );
  const agentOptions = [{ value: '', label: DEFAULT_AGENT_LABEL }, ...(agents.data?.items ?? []).map((agent) => ({ value: agent.id, label: agent.name }))];
  const idBase = title.replace(/\W+/g, '-').toLowerCase();
  return (
    <form
      class="panel account-form"
      aria-labelledby={`${idBase}-title`}
      onSubmit={(event) => {
        event.preventDefault();
        void submit.run();
      }}
    >
      <h2 id={`${idBase}-title`}>{title}</h2>
      <div class="row">
        <Field label="Schedule name" maxLength={200} value={name} placeholder="Morning report" onInput={(e: Event) => setName(valueOf(e))} />
        <SelectField label="Agent" options={agentOptions} value={agentId} onChange={(e: Event) => setAgentId(valueOf(e))} />
        <SelectField label="Mode" options={[{ value: 'react', label: 'ReAct' }, { value: 'dag', label: 'DAG (plan, then run)' }]} value={mode} onChange={(e: Event) => setMode(valueOf(e) as 'react' | 'dag')} />
      </div>
      <ErrorNotice error={agents.error} />
      <TextAreaField label="Question" required maxLength={32000} value={q} onInput={(e: Event) => setQ(valueOf(e))} />
      <fieldset class="checks">
        <legend>When it runs</legend>
        <label class="check">
          <input type="radio" name={`${idBase}-timing`} checked={timing === 'cron'} onChange={() => setTiming('cron')} />
          On a cron
        </label>
        <label class="check">
          <input type="radio" name={`${idBase}-timing`} checked={timing === 'every'} onChange={() => setTiming('every')} />
          Every N seconds
        </label>
        <div class="row">
          {timing === 'cron' ? (
            <>
              <Field label="Cron expression" required value={cron} class="mono" hint="Five fields: minute hour day-of-month month day-of-week, e.g. 0 9 * * 1-5 is 09:00 on weekdays. A sixth field in front, if given, is the second." onInput={(e: Event) => setCron(valueOf(e))} />
              <SelectField label="Time zone" options={ZONE_OPTIONS} value={timezone} onChange={(e: Event) => setTimezone(valueOf(e))} />
            </>
          ) : (
            <Field label="Interval (seconds)" type="number" required min={1} step={1} value={every} hint="At least the platform's minimum (60 s by default)" onInput={(e: Event) => setEvery(valueOf(e))} />
          )}
        </div>
      </fieldset>
      <p>
        <Check label="Enabled" checked={enabled} onChange={setEnabled} />
      </p>
      <ErrorNotice error={labelledError(submit.error, LABELS)} />
      <button type="submit" disabled={submit.busy}>
        {submit.busy ? 'Saving…' : submitLabel}
      </button>
    </form>
  );
}

/** A schedule's timing in words. */
export function timingOf(schedule: Schedule): string {
  if (schedule.every_seconds) return `every ${formatSeconds(schedule.every_seconds)}`;
  return `cron ${schedule.cron ?? ''} (${schedule.timezone})`;
}

function formatSeconds(seconds: number): string {
  if (seconds % 86400 === 0) return `${seconds / 86400} d`;
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}
