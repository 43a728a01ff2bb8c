import { useState } from 'preact/hooks';
import { must } from '../../api';
import { useConsole } from '../../context';
import { navigate } from '../../router';
import { useAction, useLoad } from '../../ui/async';
import { valueOf } from '../../ui/forms';
import { Pager, PAGE_SIZE } from '../../ui/pager';
import { ErrorNotice, LoadedView, Screen, SelectField, Table, When } from '../../ui/parts';
import { Badge } from '../account/parts';
import { RunLink } from '../runs/links';
import { EvalProgress, EvalStatusBadge, useNames, usePoll } from './parts';
import { EvalsTabs } from './tabs';
import { expectedText, isActive, percent, shortId, type Eval, type EvalResult } from './types';

/** Answers longer than this are folded under their first words. */
const FOLD_CHARS = 160;

/** One eval: status, progress, each scorer's mean, pass rate, Cancel while active, its results, and "Compare with…". */
export function EvalPage({ id }: { id: string }) {
  const { api } = useConsole();
  const names = useNames();
  const evaluation = useLoad(() => must(api.GET('/api/evals/{id}', { params: { path: { id } } })), [id]);
  usePoll(evaluation, isActive);
  const cancel = useAction(async () => {
    await must(api.POST('/api/evals/{id}/cancel', { params: { path: { id } } }));
    evaluation.reload();
  });
  return (
    <Screen title={`Eval ${shortId(id)}`} actions={<EvalsTabs current="evals" />}>
      <LoadedView loaded={evaluation}>
        {(e) => (
          <>
            <div class="panel">
              <dl class="eval-summary">
                <div>
                  <dt>Status</dt>
                  <dd>
                    <EvalStatusBadge status={e.status} />
                  </dd>
                </div>
                <div>
                  <dt>Progress</dt>
                  <dd>
                    <EvalProgress progress={e.progress} />
                  </dd>
                </div>
                <div>
                  <dt>Pass rate</dt>
                  <dd data-testid="pass-rate">{percent(e.pass_rate)}</dd>
                </div>
                {Object.entries(e.summary).map(([name, mean]) => (
                  <div key={name}>
                    <dt>Mean: {name}</dt>
                    <dd data-testid={`mean-${name}`}>{percent(mean)}</dd>
                  </div>
                ))}
                <div>
                  <dt>Dataset</dt>
                  <dd>
                    <a href={`#/evals/datasets/${e.dataset_id}`}>{names.dataset(e.dataset_id) ?? shortId(e.dataset_id)}</a>
                  </dd>
                </div>
                <div>
                  <dt>Agent</dt>
                  <dd>
                    <a href={`#/agents/${e.agent_id}`}>{names.agent(e.agent_id) ?? shortId(e.agent_id)}</a> v{e.agent_version}
                  </dd>
                </div>
                <div>
                  <dt>Mode, concurrency</dt>
                  <dd>
                    {e.mode}, {e.concurrency}
                  </dd>
                </div>
                <div>
                  <dt>Scorers</dt>
                  <dd class="small">{e.scorers.map(describeScorer).join('; ')}</dd>
                </div>
                <div>
                  <dt>Created</dt>
                  <dd>
                    <When at={e.created_at} />
                  </dd>
                </div>
                <div>
                  <dt>Finished</dt>
                  <dd>
                    <When at={e.finished_at} />
                  </dd>
                </div>
              </dl>
              {e.error && (
                <p class="error" role="alert">
                  {e.error.message} <span class="muted">({e.error.code})</span>
                </p>
              )}
              {isActive(e) && (
                <div class="row">
                  <button type="button" class="secondary" onClick={() => void cancel.run()} disabled={cancel.busy}>
                    {cancel.busy ? 'Cancelling…' : 'Cancel eval'}
                  </button>
                </div>
              )}
              <ErrorNotice error={cancel.error} />
            </div>
            <CompareWith evaluation={e} />
            <Results evaluation={e} />
          </>
        )}
      </LoadedView>
    </Screen>
  );
}

function describeScorer(scorer: Eval['scorers'][number]): string {
  const { type, name, threshold, ...params } = scorer as { type: string; name?: string; threshold?: number } & Record<string, unknown>;
  const shown = Object.entries(params)
    .filter(([key]) => key !== 'schema' && key !== 'rubric')
    .map(([key, value]) => `${key} ${String(value)}`);
  if (threshold !== undefined) shown.unshift(`pass ≥ ${threshold}`);
  return `${name && name !== type ? `${name} (${type})` : type}${shown.length ? `: ${shown.join(', ')}` : ''}`;
}

/** The per-item results, reloaded as the eval moves on (its progress changes the key). */
function Results({ evaluation }: { evaluation: Eval }) {
  const { api } = useConsole();
  const [page, setPage] = useState(1);
  const { done, failed } = evaluation.progress;
  const results = useLoad(() => must(api.GET('/api/evals/{id}/results', { params: { path: { id: evaluation.id }, query: { page, size: PAGE_SIZE } } })), [evaluation.id, page, done, failed, evaluation.status]);
  const scorerNames = Object.keys(evaluation.summary);
  return (
    <section aria-labelledby="results-title">
      <h2 id="results-title">Results</h2>
      <LoadedView loaded={results}>
        {(data) => (
          <>
            <div class="table-scroll">
              <Table<EvalResult>
                caption="Each item's answer and scores, in dataset order"
                rows={data.items}
                rowKey={(r) => r.item_id}
                empty="No results yet."
                columns={[
                  { header: 'Question', cell: (r) => <span class="eval-question">{r.input.q}</span> },
                  { header: 'Expected', cell: (r) => <code>{expectedText(r.expected)}</code> },
                  { header: 'Answer', cell: (r) => <Answer result={r} /> },
                  ...scorerNames.map((name) => ({ header: name, cell: (r: EvalResult) => (r.scores && name in r.scores ? percent(r.scores[name]) : <span class="muted">—</span>) })),
                  { header: 'Passed', cell: (r) => <Passed result={r} /> },
                  { header: 'Run', cell: (r) => (r.run_id ? <RunLink id={r.run_id} /> : <span class="muted">—</span>) },
                ]}
              />
            </div>
            <Pager page={data.page} pages={data.pages} total={data.total} onPage={setPage} label="Pages of results" noun={{ one: 'item', many: 'items' }} />
          </>
        )}
      </LoadedView>
    </section>
  );
}

function Answer({ result }: { result: EvalResult }) {
  if (result.error) return <span class="eval-failed small">{result.error.message}</span>;
  const text = result.output;
  if (!text) return <span class="muted">{result.status === 'pending' || result.status === 'running' ? `${result.status}…` : '—'}</span>;
  if (text.length <= FOLD_CHARS) return <span class="eval-answer">{text}</span>;
  return (
    <details class="eval-answer">
      <summary>{text.slice(0, FOLD_CHARS - 40)}… (show all)</summary>
      <p>{text}</p>
    </details>
  );
}

function Passed({ result }: { result: EvalResult }) {
  if (result.passed === true) return <Badge tone="ok">passed</Badge>;
  if (result.passed === false) return <Badge tone="failed">not passed</Badge>;
  return <span class="muted">{result.status}</span>;
}

/** The other evals of this eval's dataset, to compare this one (a) with the chosen one (b). */
function CompareWith({ evaluation }: { evaluation: Eval }) {
  const { api } = useConsole();
  const names = useNames();
  const others = useLoad(() => must(api.GET('/api/evals', { params: { query: { dataset_id: evaluation.dataset_id, size: 100 } } })), [evaluation.dataset_id]);
  const [other, setOther] = useState('');
  const choices = (others.data?.items ?? []).filter((o) => o.id !== evaluation.id);
  if (others.data && choices.length === 0) return <p class="muted">No other eval of this dataset to compare with yet.</p>;
  const options = [
    { value: '', label: 'Choose an eval of this dataset' },
    ...choices.map((o) => ({ value: o.id, label: `${shortId(o.id)} · ${names.agent(o.agent_id) ?? shortId(o.agent_id)} v${o.agent_version} · ${o.status} · ${new Date(o.created_at).toLocaleString()}` })),
  ];
  return (
    <form
      class="panel eval-compare-pick"
      aria-label="Compare with another eval"
      onSubmit={(event) => {
        event.preventDefault();
        if (other) navigate(`/evals/compare/${evaluation.id}/${other}`);
      }}
    >
      <SelectField label="Compare with…" options={options} value={other} onChange={(e: Event) => setOther(valueOf(e))} />
      <div class="field">
        <button type="submit" disabled={!other}>
          Compare
        </button>
      </div>
      <ErrorNotice error={others.error} />
    </form>
  );
}
