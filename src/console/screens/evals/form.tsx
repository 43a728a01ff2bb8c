import { useState } from 'preact/hooks';
import { must } from '../../api';
import { useConsole } from '../../context';
import { navigate } from '../../router';
import { useAction, useLoad } from '../../ui/async';
import { labelledError, valueOf } from '../../ui/forms';
import { PICKER_SIZE } from '../../ui/pager';
import { ErrorNotice, Field, Screen, SelectField, TextAreaField } from '../../ui/parts';
import { Check } from '../account/parts';
import { EvalsTabs } from './tabs';
import type { Scorer, ScorerType } from './types';

const SCORER_TYPES: { value: ScorerType; label: string }[] = [
  { value: 'contains', label: 'contains (the answer holds expected)' },
  { value: 'exact', label: 'exact (the answer is expected)' },
  { value: 'regex', label: 'regex (the answer matches a pattern)' },
  { value: 'numeric', label: 'numeric (a number within a tolerance)' },
  { value: 'json_schema', label: 'json_schema (the answer fits a schema)' },
  { value: 'cites', label: 'cites (the answer cites sources)' },
  { value: 'llm_judge', label: 'llm_judge (a model scores it)' },
];

/** One scorer as typed: every parameter as text, made into the API's shape on submit. */
interface ScorerDraft {
  key: number;
  type: ScorerType;
  name: string;
  threshold: string;
  ignoreCase: boolean;
  pattern: string;
  flags: string;
  tolerance: string;
  relative: boolean;
  schema: string;
  min: string;
  model: string;
  rubric: string;
}

let nextKey = 1;
const blank = (type: ScorerType = 'contains'): ScorerDraft => ({ key: nextKey++, type, name: '', threshold: '', ignoreCase: false, pattern: '', flags: '', tolerance: '', relative: false, schema: '{\n  "type": "object"\n}', min: '', model: 'local', rubric: '' });

const number = (text: string, what: string): number | undefined => {
  if (!text.trim()) return undefined;
  const n = Number(text);
  if (!Number.isFinite(n)) throw new Error(`${what} must be a number`);
  return n;
};

function scorerOf(draft: ScorerDraft, index: number): Scorer {
  const which = `Scorer ${index + 1}`;
  const common = { ...(draft.name.trim() ? { name: draft.name.trim() } : {}), ...(draft.threshold.trim() ? { threshold: number(draft.threshold, `${which}: threshold`) } : {}) };
  switch (draft.type) {
    case 'exact':
    case 'contains':
      return { type: draft.type, ...common, ...(draft.ignoreCase ? { ignore_case: true } : {}) };
    case 'regex':
      return { type: 'regex', ...common, ...(draft.pattern ? { pattern: draft.pattern } : {}), ...(draft.flags ? { flags: draft.flags } : {}) };
    case 'numeric':
      return { type: 'numeric', ...common, ...(draft.tolerance.trim() ? { tolerance: number(draft.tolerance, `${which}: tolerance`) } : {}), ...(draft.relative ? { relative: true } : {}) };
    case 'json_schema': {
      let schema: unknown;
      try {
        schema = JSON.parse(draft.schema);
      } catch {
        throw new Error(`${which}: the JSON schema is not valid JSON`);
      }
      return { type: 'json_schema', ...common, schema };
    }
    case 'cites':
      return { type: 'cites', ...common, ...(draft.min.trim() ? { min: number(draft.min, `${which}: minimum citations`) } : {}) };
    case 'llm_judge':
      return { type: 'llm_judge', ...common, model: draft.model.trim(), rubric: draft.rubric };
  }
}

const PARAM_LABELS: Record<string, string> = { name: 'name', threshold: 'pass threshold', ignore_case: 'ignore case', pattern: 'pattern', flags: 'flags', tolerance: 'tolerance', relative: 'relative', schema: 'JSON schema', min: 'minimum citations', model: 'judge model', rubric: 'rubric', type: 'type' };

/** The API's field names as this form labels them, for its 422s; each scorer's by its number. */
function labelsFor(error: Error | undefined): Record<string, string> {
  const labels: Record<string, string> = { dataset_id: 'Dataset', agent_id: 'Agent', agent_version: 'Agent version', mode: 'Mode', scorers: 'Scorers', concurrency: 'Concurrency', request: 'Eval' };
  for (const { path } of (error as { fields?: { path: string }[] } | undefined)?.fields ?? []) {
    const match = /^scorers\.(\d+)(?:\.(\w+))?/.exec(path);
    if (match) labels[path] = `Scorer ${Number(match[1]) + 1}${match[2] ? ` (${PARAM_LABELS[match[2]] ?? match[2]})` : ''}`;
  }
  return labels;
}

/** A new eval: which dataset, which agent and version, mode, the scorers with their parameters, concurrency. */
export function NewEvalForm({ datasetId }: { datasetId?: string }) {
  const { api } = useConsole();
  const datasets = useLoad(() => must(api.GET('/api/datasets', { params: { query: { size: PICKER_SIZE } } })), []);
  const agents = useLoad(() => must(api.GET('/api/agents', { params: { query: { size: PICKER_SIZE } } })), []);
  const [dataset, setDataset] = useState(datasetId ?? '');
  const [agent, setAgent] = useState('');
  const [version, setVersion] = useState('');
  const [mode, setMode] = useState<'react' | 'dag'>('react');
  const [concurrency, setConcurrency] = useState('4');
  const [scorers, setScorers] = useState<ScorerDraft[]>([blank()]);
  const versions = useLoad(() => (agent ? must(api.GET('/api/agents/{id}/versions', { params: { path: { id: agent }, query: { size: PICKER_SIZE } } })) : Promise.resolve(undefined)), [agent]);
  const change = (key: number, fields: Partial<ScorerDraft>) => setScorers((list) => list.map((s) => (s.key === key ? { ...s, ...fields } : s)));

  const submit = useAction(async () => {
    const body = {
      dataset_id: dataset,
      agent_id: agent,
      mode,
      ...(version ? { agent_version: Number(version) } : {}),
      concurrency: Number(concurrency),
      scorers: scorers.map(scorerOf),
    };
    const created = await must(api.POST('/api/evals', { body }));
    navigate(`/evals/${created.id}`);
  });

  const datasetOptions = [{ value: '', label: 'Choose a dataset' }, ...(datasets.data?.items ?? []).map((d) => ({ value: d.id, label: `${d.name} (${d.item_count} items)` }))];
  const agentOptions = [{ value: '', label: 'Choose an agent' }, ...(agents.data?.items ?? []).map((a) => ({ value: a.id, label: `${a.name} (v${a.version})` }))];
  const current = agents.data?.items.find((a) => a.id === agent)?.version;
  const versionOptions = [{ value: '', label: current ? `Current (v${current})` : 'Current' }, ...(versions.data?.items ?? []).filter((v) => v.version !== current).map((v) => ({ value: String(v.version), label: `v${v.version}` }))];
  return (
    <Screen title="New eval" actions={<EvalsTabs current="evals" />}>
      <form
        class="panel"
        aria-labelledby="screen-title"
        onSubmit={(event) => {
          event.preventDefault();
          void submit.run();
        }}
      >
        <div class="row">
          <SelectField label="Dataset" options={datasetOptions} value={dataset} onChange={(e: Event) => setDataset(valueOf(e))} />
          <SelectField
            label="Agent"
            options={agentOptions}
            value={agent}
            onChange={(e: Event) => {
              setAgent(valueOf(e));
              setVersion('');
            }}
          />
          <SelectField label="Agent version" options={versionOptions} value={version} disabled={!agent} onChange={(e: Event) => setVersion(valueOf(e))} />
          <SelectField label="Mode" options={[{ value: 'react', label: 'ReAct' }, { value: 'dag', label: 'DAG (plan, then run)' }]} value={mode} onChange={(e: Event) => setMode(valueOf(e) as 'react' | 'dag')} />
          <Field label="Concurrency" type="number" min={1} max={20} step={1} required value={concurrency} hint="Items run at once, 1-20" onInput={(e: Event) => setConcurrency(valueOf(e))} />
        </div>
        <ErrorNotice error={datasets.error ?? agents.error ?? versions.error} />
        {datasets.data && datasets.data.items.length === 0 && (
          <p class="notice">
            You have no datasets yet: <a href="#/evals/datasets">create one</a> first.
          </p>
        )}
        <h2>Scorers</h2>
        {scorers.map((draft, index) => (
          <ScorerFields key={draft.key} draft={draft} index={index} onChange={(fields) => change(draft.key, fields)} onRemove={scorers.length > 1 ? () => setScorers((list) => list.filter((s) => s.key !== draft.key)) : undefined} />
        ))}
        <p>
          <button type="button" class="secondary" disabled={scorers.length >= 10} onClick={() => setScorers((list) => [...list, blank()])}>
            Add a scorer
          </button>
        </p>
        <ErrorNotice error={labelledError(submit.error, labelsFor(submit.error))} />
        <button type="submit" disabled={submit.busy}>
          {submit.busy ? 'Starting…' : 'Start eval'}
        </button>
      </form>
    </Screen>
  );
}

function ScorerFields({ draft, index, onChange, onRemove }: { draft: ScorerDraft; index: number; onChange: (fields: Partial<ScorerDraft>) => void; onRemove?: () => void }) {
  const n = index + 1;
  const text = (field: keyof ScorerDraft) => (e: Event) => onChange({ [field]: valueOf(e) } as Partial<ScorerDraft>);
  return (
    <fieldset class="scorer-row">
      <legend>Scorer {n}</legend>
      <div class="row">
        <SelectField label={`Scorer ${n} type`} options={SCORER_TYPES} value={draft.type} onChange={(e: Event) => onChange({ type: valueOf(e) as ScorerType })} />
        <Field label={`Scorer ${n} name`} value={draft.name} placeholder={draft.type} pattern="[A-Za-z0-9_.\-]{1,64}" hint="Optional: its column in results" onInput={text('name')} />
        <Field label={`Scorer ${n} pass threshold`} type="number" min={0} max={1} step="any" value={draft.threshold} placeholder={draft.type === 'llm_judge' ? '0.7' : '1'} hint="0-1" onInput={text('threshold')} />
        {(draft.type === 'exact' || draft.type === 'contains') && (
          <div class="field">
            <Check label="Ignore case" checked={draft.ignoreCase} onChange={(ignoreCase) => onChange({ ignoreCase })} />
          </div>
        )}
        {draft.type === 'regex' && (
          <>
            <Field label={`Scorer ${n} pattern`} class="mono" value={draft.pattern} hint="Empty: each item's expected is the pattern" onInput={text('pattern')} />
            <Field label={`Scorer ${n} flags`} value={draft.flags} maxLength={4} hint="Some of i, m, s, u" onInput={text('flags')} />
          </>
        )}
        {draft.type === 'numeric' && (
          <>
            <Field label={`Scorer ${n} tolerance`} type="number" min={0} step="any" value={draft.tolerance} onInput={text('tolerance')} />
            <div class="field">
              <Check label="Relative (a fraction of expected)" checked={draft.relative} onChange={(relative) => onChange({ relative })} />
            </div>
          </>
        )}
        {draft.type === 'cites' && <Field label={`Scorer ${n} minimum citations`} type="number" min={1} step={1} value={draft.min} placeholder="1" onInput={text('min')} />}
        {draft.type === 'llm_judge' && <Field label={`Scorer ${n} judge model`} required value={draft.model} hint="local when there is no gateway" onInput={text('model')} />}
      </div>
      {draft.type === 'json_schema' && <TextAreaField label={`Scorer ${n} JSON schema`} class="mono" rows={4} value={draft.schema} onInput={text('schema')} />}
      {draft.type === 'llm_judge' && <TextAreaField label={`Scorer ${n} rubric`} required rows={3} maxLength={4000} value={draft.rubric} placeholder="What makes a good answer" onInput={text('rubric')} />}
      {onRemove && (
        <p>
          <button type="button" class="secondary" onClick={onRemove} aria-label={`Remove scorer ${n}`}>
            Remove
          </button>
        </p>
      )}
    </fieldset>
  );
}
