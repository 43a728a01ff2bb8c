import { useState } from 'preact/hooks';
import type { paths } from '../../api/schema';
import type { ApiClient } from '../../api';
import { must } from '../../api';
import { useConsole } from '../../context';
import { useLoad } from '../../ui/async';
import { Field, LoadedView, Screen, SelectField, Table } from '../../ui/parts';
import { formatCost, formatNumber } from '../account/parts';
import { valueOf } from '../../ui/forms';
import { useUserNames } from './shared';
import { UsageChart, type DayBar } from './usage-chart';

type UsageRow = paths['/api/admin/usage']['get']['responses'][200]['content']['application/json']['items'][number];
type Measure = 'tokens' | 'runs' | 'cost';
const DAY_MS = 86_400_000;
const MAX_DAYS = 366;

const MEASURES: Record<Measure, { label: string; of: (row: UsageRow) => number; format: (n: number) => string }> = {
  tokens: { label: 'tokens', of: (row) => row.prompt_tokens + row.completion_tokens + row.reasoning_tokens, format: compact },
  runs: { label: 'runs', of: (row) => row.runs, format: compact },
  cost: { label: 'cost', of: (row) => row.cost ?? 0, format: (n) => n.toLocaleString(undefined, { maximumSignificantDigits: 3 }) },
};

/** Usage and cost per UTC day (DESIGN §9, §18) as a bar chart and a table, over a date range, and per user. */
export default function UsageScreen() {
  const { api } = useConsole();
  const { nameOf } = useUserNames();
  const [range, setRange] = useState(() => ({ from: isoDay(Date.now() - 29 * DAY_MS), to: isoDay(Date.now()) }));
  const [measure, setMeasure] = useState<Measure>('tokens');
  const problem = rangeProblem(range);
  const usage = useLoad(() => (problem ? Promise.reject(new Error(problem)) : loadUsage(api, range)), [range.from, range.to]);
  return (
    <Screen title="Usage and cost">
      <div class="row filters" role="search" aria-label="Date range">
        <Field label="From (UTC day)" type="date" required value={range.from} max={range.to} onChange={(e: Event) => setRange({ ...range, from: valueOf(e) })} />
        <Field label="To (UTC day, included)" type="date" required value={range.to} min={range.from} onChange={(e: Event) => setRange({ ...range, to: valueOf(e) })} />
        <SelectField
          label="Chart shows"
          options={Object.entries(MEASURES).map(([value, m]) => ({ value, label: m.label }))}
          value={measure}
          onChange={(e: Event) => setMeasure(valueOf(e) as Measure)}
        />
      </div>
      <LoadedView loaded={usage}>
        {({ days, users }) => {
          const m = MEASURES[measure];
          const byDay = new Map(days.map((row) => [row.key, row]));
          const bars: DayBar[] = daysBetween(range.from, range.to).map((day) => ({ day, value: byDay.has(day) ? m.of(byDay.get(day)!) : 0 }));
          return (
            <>
              <div class="panel chart-panel">
                <h2 id="usage-chart-title">
                  {m.label[0]!.toUpperCase() + m.label.slice(1)} per day, {range.from} to {range.to}
                </h2>
                <UsageChart bars={bars} measure={m.label} format={m.format} titleId="usage-chart-title" />
                {measure === 'cost' && days.every((row) => row.cost === null) && <p class="muted">No run in this range had a model price: set prices under Model prices.</p>}
              </div>
              <UsageTable caption="Per day (days with runs)" rows={days} keyHeader="Day" nameOf={(key) => key} />
              <UsageTable caption="Per user" rows={users} keyHeader="User" nameOf={nameOf} />
            </>
          );
        }}
      </LoadedView>
    </Screen>
  );
}

function UsageTable({ caption, rows, keyHeader, nameOf }: { caption: string; rows: UsageRow[]; keyHeader: string; nameOf: (key: string) => string }) {
  const totals = rows.reduce(
    (sum, row) => ({ ...sum, runs: sum.runs + row.runs, succeeded: sum.succeeded + row.succeeded, failed: sum.failed + row.failed, cancelled: sum.cancelled + row.cancelled, prompt_tokens: sum.prompt_tokens + row.prompt_tokens, completion_tokens: sum.completion_tokens + row.completion_tokens, reasoning_tokens: sum.reasoning_tokens + row.reasoning_tokens, cost: row.cost === null ? sum.cost : (sum.cost ?? 0) + row.cost }),
    { key: 'Total', runs: 0, succeeded: 0, failed: 0, cancelled: 0, prompt_tokens: 0, completion_tokens: 0, reasoning_tokens: 0, cost: null as number | null },
  );
  return (
    <div class="table-scroll">
      <Table<UsageRow>
        caption={caption}
        rows={rows.length ? [...rows, totals] : []}
        rowKey={(row) => row.key}
        empty="No runs in this range."
        columns={[
          { header: keyHeader, cell: (row) => (row === totals ? <strong>Total</strong> : nameOf(row.key)) },
          { header: 'Runs', cell: (row) => formatNumber(row.runs) },
          { header: 'Succeeded', cell: (row) => formatNumber(row.succeeded) },
          { header: 'Failed', cell: (row) => formatNumber(row.failed) },
          { header: 'Cancelled', cell: (row) => formatNumber(row.cancelled) },
          { header: 'Prompt tokens', cell: (row) => formatNumber(row.prompt_tokens) },
          { header: 'Completion tokens', cell: (row) => formatNumber(row.completion_tokens) },
          { header: 'Reasoning tokens', cell: (row) => formatNumber(row.reasoning_tokens) },
          { header: 'Cost', cell: (row) => formatCost(row.cost) },
        ]}
      />
    </div>
  );
}

/** Every day row of the range (at most 366, so at most 4 pages of 100), and the first 100 users'. */
async function loadUsage(api: ApiClient, range: { from: string; to: string }): Promise<{ days: UsageRow[]; users: UsageRow[] }> {
  const window = { from: `${range.from}T00:00:00.000Z`, to: new Date(Date.parse(`${range.to}T00:00:00.000Z`) + DAY_MS).toISOString() };
  const days: UsageRow[] = [];
  for (let page = 1; ; page++) {
    const answer = await must(api.GET('/api/admin/usage', { params: { query: { ...window, group_by: 'day', page, size: 100 } } }));
    days.push(...answer.items);
    if (page >= answer.pages) break;
  }
  const users = await must(api.GET('/api/admin/usage', { params: { query: { ...window, group_by: 'user', size: 100 } } }));
  return { days, users: users.items };
}

function rangeProblem(range: { from: string; to: string }): string | undefined {
  if (!range.from || !range.to) return 'Choose both days of the range.';
  const days = (Date.parse(range.to) - Date.parse(range.from)) / DAY_MS + 1;
  if (!(days >= 1)) return 'The first day must not be after the last.';
  if (days > MAX_DAYS) return `The range may span at most ${MAX_DAYS} days.`;
  return undefined;
}

function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  for (let at = Date.parse(`${from}T00:00:00Z`); at <= Date.parse(`${to}T00:00:00Z`); at += DAY_MS) days.push(isoDay(at));
  return days;
}

const isoDay = (at: number) => new Date(at).toISOString().slice(0, 10);

function compact(n: number): string {
  return n.toLocaleString(undefined, { notation: n >= 10_000 ? 'compact' : 'standard', maximumFractionDigits: 1 });
}
