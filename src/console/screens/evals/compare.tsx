import { must } from '../../api';
import { useConsole } from '../../context';
import { useLoad } from '../../ui/async';
import { LoadedView, Screen, Table } from '../../ui/parts';
import { EvalStatusBadge, useNames } from './parts';
import { EvalsTabs } from './tabs';
import { percent, shortId, type Comparison } from './types';

type Row = { name: string } & Comparison['scorers'][string];

/** Two evals of one dataset side by side (GET /api/evals/compare): each scorer's means, and a's wins, losses and ties against b. */
export function ComparePage({ a, b }: { a: string; b: string }) {
  const { api } = useConsole();
  const names = useNames();
  const comparison = useLoad(() => must(api.GET('/api/evals/compare', { params: { query: { a, b } } })), [a, b]);
  const side = (label: string, s: Comparison['a']) => (
    <div>
      <dt>{label}</dt>
      <dd>
        <a href={`#/evals/${s.id}`}>
          <code>{shortId(s.id)}</code>
        </a>{' '}
        {names.agent(s.agent_id) ?? shortId(s.agent_id)} v{s.agent_version} <EvalStatusBadge status={s.status} />
      </dd>
    </div>
  );
  return (
    <Screen title="Compare evals" actions={<EvalsTabs current="evals" />}>
      <LoadedView loaded={comparison}>
        {(c) => (
          <>
            <div class="panel">
              <dl class="eval-summary">
                {side('A', c.a)}
                {side('B', c.b)}
                <div>
                  <dt>Dataset</dt>
                  <dd>
                    <a href={`#/evals/datasets/${c.dataset_id}`}>{names.dataset(c.dataset_id) ?? shortId(c.dataset_id)}</a>
                  </dd>
                </div>
              </dl>
              <p class="eval-swap">
                <a href={`#/evals/compare/${b}/${a}`}>Swap A and B</a>
              </p>
            </div>
            <h2 id="items-tally-title">Items: A against B</h2>
            <p class="muted small">Per item both scored, by the mean of the scorers both have.</p>
            <dl class="eval-tally" aria-labelledby="items-tally-title" data-testid="items-tally">
              <div>
                <dt>Compared</dt>
                <dd data-testid="tally-compared">{c.items.compared}</dd>
              </div>
              <div>
                <dt>A wins</dt>
                <dd class="win" data-testid="tally-wins">
                  {c.items.wins}
                </dd>
              </div>
              <div>
                <dt>A losses</dt>
                <dd class="loss" data-testid="tally-losses">
                  {c.items.losses}
                </dd>
              </div>
              <div>
                <dt>Ties</dt>
                <dd data-testid="tally-ties">{c.items.ties}</dd>
              </div>
            </dl>
            <div class="table-scroll">
              <Table<Row>
                caption="Each scorer: the mean of A and of B over the items both scored, and A's wins, losses and ties"
                rows={Object.entries(c.scorers).map(([name, s]) => ({ name, ...s }))}
                rowKey={(r) => r.name}
                empty="The two evals share no scorer."
                columns={[
                  { header: 'Scorer', cell: (r) => <strong>{r.name}</strong> },
                  { header: 'Mean A', cell: (r) => percent(r.a) },
                  { header: 'Mean B', cell: (r) => percent(r.b) },
                  { header: 'Difference', cell: (r) => difference(r.a, r.b) },
                  { header: 'A wins', cell: (r) => r.wins },
                  { header: 'A losses', cell: (r) => r.losses },
                  { header: 'Ties', cell: (r) => r.ties },
                ]}
              />
            </div>
          </>
        )}
      </LoadedView>
    </Screen>
  );
}

function difference(a: number | null, b: number | null) {
  if (a == null || b == null) return <span class="muted">—</span>;
  const points = (a - b) * 100;
  const shown = `${points > 0 ? '+' : ''}${points.toLocaleString(undefined, { maximumFractionDigits: 1 })} pts`;
  return <span class={points > 0 ? 'win' : points < 0 ? 'loss' : ''}>{shown}</span>;
}
