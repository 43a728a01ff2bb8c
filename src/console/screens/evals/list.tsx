import { useState } from 'preact/hooks';
import { must } from '../../api';
import { useConsole } from '../../context';
import { useLoad } from '../../ui/async';
import { Pager, PAGE_SIZE } from '../../ui/pager';
import { LoadedView, Screen, Table, When } from '../../ui/parts';
import { EvalProgress, EvalStatusBadge, useNames, usePoll } from './parts';
import { EvalsTabs } from './tabs';
import { isActive, percent, shortId, type Eval } from './types';

/** The user's evals, newest first (or one dataset's), each with its progress; refreshed while any is queued or running. */
export function EvalList({ datasetId }: { datasetId?: string }) {
  const { api } = useConsole();
  const names = useNames();
  const [page, setPage] = useState(1);
  const evals = useLoad(() => must(api.GET('/api/evals', { params: { query: { page, size: PAGE_SIZE, ...(datasetId ? { dataset_id: datasetId } : {}) } } })), [page, datasetId]);
  usePoll(evals, (data) => data.items.some(isActive));
  const datasetName = datasetId ? names.dataset(datasetId) : undefined;
  return (
    <Screen title="Evals" actions={<EvalsTabs current="evals" />}>
      {datasetId ? (
        <p>
          Evals of the dataset <a href={`#/evals/datasets/${datasetId}`}>{datasetName ?? shortId(datasetId)}</a> · <a href="#/evals">all evals</a>
        </p>
      ) : (
        <p class="muted">An eval runs one version of an agent over a dataset, each item as a background run, and scores every answer.</p>
      )}
      <LoadedView loaded={evals}>
        {(data) => (
          <>
            <div class="table-scroll">
              <Table<Eval>
                caption={datasetId ? "This dataset's evals, newest first" : 'Your evals, newest first'}
                rows={data.items}
                rowKey={(e) => e.id}
                empty={datasetId ? 'No evals of this dataset yet.' : 'You have no evals yet: make a dataset, then start a new eval.'}
                columns={[
                  {
                    header: 'Eval',
                    cell: (e) => (
                      <div>
                        <a href={`#/evals/${e.id}`} title={`Eval ${e.id}`}>
                          <code>{shortId(e.id)}</code>
                        </a>
                        <div class="muted small">
                          <When at={e.created_at} />
                        </div>
                      </div>
                    ),
                  },
                  { header: 'Dataset', cell: (e) => <a href={`#/evals/datasets/${e.dataset_id}`}>{names.dataset(e.dataset_id) ?? shortId(e.dataset_id)}</a> },
                  {
                    header: 'Agent',
                    cell: (e) => (
                      <span>
                        {names.agent(e.agent_id) ?? shortId(e.agent_id)} <span class="muted">v{e.agent_version}</span>
                      </span>
                    ),
                  },
                  { header: 'Status', cell: (e) => <EvalStatusBadge status={e.status} /> },
                  { header: 'Progress', cell: (e) => <EvalProgress progress={e.progress} /> },
                  { header: 'Pass rate', cell: (e) => percent(e.pass_rate) },
                  {
                    header: 'Means',
                    cell: (e) => (
                      <span class="eval-means small">
                        {Object.entries(e.summary).map(([name, mean]) => (
                          <span key={name}>
                            {name} {percent(mean)}
                          </span>
                        ))}
                      </span>
                    ),
                  },
                ]}
              />
            </div>
            <Pager page={data.page} pages={data.pages} total={data.total} onPage={setPage} label="Pages of evals" noun={{ one: 'eval', many: 'evals' }} />
          </>
        )}
      </LoadedView>
    </Screen>
  );
}
