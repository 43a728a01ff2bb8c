import { useState } from 'preact/hooks';
import { Field, SelectField, When } from '../../ui/parts';
import { valueOf } from '../../ui/forms';
import { formatNumber } from './parts';

/** DESIGN §18: what a key or a user may use, and what its budget's period has used. */
export interface Limits {
  rate_limit_rpm: number | null;
  token_budget: { limit: number; period: 'day' | 'month' } | null;
}
export interface LimitsRecord extends Limits {
  token_usage: { used: number; period_start: string; resets_at: string } | null;
}

const PERIODS = [
  { value: 'day', label: 'per UTC day' },
  { value: 'month', label: 'per UTC month' },
];

/** The form's text for limits: empty is "none". */
export interface LimitsDraft {
  rpm: string;
  budget: string;
  period: 'day' | 'month';
}

export const draftOf = (limits?: Limits): LimitsDraft => ({
  rpm: limits?.rate_limit_rpm?.toString() ?? '',
  budget: limits?.token_budget?.limit.toString() ?? '',
  period: limits?.token_budget?.period ?? 'day',
});

/** The request fields of a draft (null clears a limit); the API validates the numbers and names a bad one. */
export function limitsOf(draft: LimitsDraft): Limits {
  return {
    rate_limit_rpm: draft.rpm.trim() ? Number(draft.rpm) : null,
    token_budget: draft.budget.trim() ? { limit: Number(draft.budget), period: draft.period } : null,
  };
}

export function LimitsFields({ draft, onChange, noneHint }: { draft: LimitsDraft; onChange: (draft: LimitsDraft) => void; noneHint: string }) {
  return (
    <div class="row">
      <Field label="Rate limit (requests per minute)" type="number" min={1} max={100000} step={1} value={draft.rpm} hint={noneHint} onInput={(e: Event) => onChange({ ...draft, rpm: valueOf(e) })} />
      <Field label="Token budget" type="number" min={1} step={1} value={draft.budget} hint={noneHint} onInput={(e: Event) => onChange({ ...draft, budget: valueOf(e) })} />
      <SelectField label="Budget period" options={PERIODS} value={draft.period} onChange={(e: Event) => onChange({ ...draft, period: valueOf(e) as 'day' | 'month' })} />
    </div>
  );
}

/** A record's rate limit, and its budget with what the current period used (a meter) and when it resets. */
export function LimitsSummary({ record, label }: { record: LimitsRecord; label: string }) {
  const budget = record.token_budget;
  const used = record.token_usage?.used ?? 0;
  return (
    <div class="limits">
      <div>{record.rate_limit_rpm ? `${formatNumber(record.rate_limit_rpm)} req/min` : <span class="muted">no rate limit</span>}</div>
      {budget ? (
        <div>
          <meter min={0} max={budget.limit} value={Math.min(used, budget.limit)} high={budget.limit * 0.8} optimum={0} aria-label={`Tokens used of the budget of ${label}`} />
          <div class="limits-used">
            {formatNumber(used)} / {formatNumber(budget.limit)} tokens per {budget.period}
          </div>
          {record.token_usage && (
            <div class="muted limits-reset">
              resets <When at={record.token_usage.resets_at} />
            </div>
          )}
        </div>
      ) : (
        <div class="muted">no token budget</div>
      )}
    </div>
  );
}

/** An inline editor of a record's limits: Save sends them, Cancel closes it. */
export function LimitsEditor({ title, initial, onSave, onCancel, noneHint }: { title: string; initial: Limits; onSave: (limits: Limits) => Promise<boolean>; onCancel: () => void; noneHint: string }) {
  const [draft, setDraft] = useState(draftOf(initial));
  return (
    <form
      class="panel account-form"
      aria-label={title}
      onSubmit={(event) => {
        event.preventDefault();
        void onSave(limitsOf(draft)).then((saved) => saved && onCancel());
      }}
    >
      <h2>{title}</h2>
      <LimitsFields draft={draft} onChange={setDraft} noneHint={noneHint} />
      <div class="row">
        <button type="submit">Save limits</button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
