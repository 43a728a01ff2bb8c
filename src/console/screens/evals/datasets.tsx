import { useState } from 'preact/hooks';
import { must } from '../../api';
import { useConsole } from '../../context';
import { navigate } from '../../router';
import { useAction, useLoad } from '../../ui/async';
import { labelledError, valueOf } from '../../ui/forms';
import { Pager, PAGE_SIZE } from '../../ui/pager';
import { ErrorNotice, Field, LoadedView, Screen, Table, TextAreaField, When } from '../../ui/parts';
import { excerpt } from '../account/parts';
import { EvalsTabs } from './tabs';
import type { Dataset } from './types';

/** Datasets (DESIGN §24): the user's, newest first, and a form to make one (its items are added on its page). */
export function DatasetList() {
  const { api } = useConsole();
  const [page, setPage] = useState(1);
  const datasets = useLoad(() => must(api.GET('/api/datasets', { params: { query: { page, size: PAGE_SIZE } } })), [page]);
  return (
    <Screen title="Datasets" actions={<EvalsTabs current="datasets" />}>
      <p class="muted">A dataset is a list of questions, each with what a good answer holds; an eval runs an agent over it and scores each answer.</p>
      <LoadedView loaded={datasets}>
        {(data) => (
          <>
            <div class="table-scroll">
              <Table<Dataset>
                caption="Your datasets"
                rows={data.items}
                rowKey={(d) => d.id}
                empty="You have no datasets yet: create one below."
                columns={[
                  {
                    header: 'Dataset',
                    cell: (d) => (
                      <div>
                        <a href={`#/evals/datasets/${d.id}`}>{d.name}</a>
                        {d.description && <div class="muted small">{excerpt(d.description, 90)}</div>}
                      </div>
                    ),
                  },
                  { header: 'Items', cell: (d) => d.item_count.toLocaleString() },
                  { header: 'Updated', cell: (d) => <When at={d.updated_at} /> },
                  { header: 'Evals', cell: (d) => <a href={`#/evals/new/${d.id}`} aria-label={`New eval of ${d.name}`}>New eval</a> },
                ]}
              />
            </div>
            <Pager page={data.page} pages={data.pages} total={data.total} onPage={setPage} label="Pages of datasets" noun={{ one: 'dataset', many: 'datasets' }} />
          </>
        )}
      </LoadedView>
      <CreateDataset />
    </Screen>
  );
}

function CreateDataset() {
  const { api } = useConsole();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const create = useAction(async () => {
    const created = await must(api.POST('/api/datasets', { body: { name, ...(description.trim() ? { description } : {}) } }));
    navigate(`/evals/datasets/${created.id}`);
  });
  return (
    <form
      class="panel evals-panel"
      aria-labelledby="new-dataset-title"
      onSubmit={(event) => {
        event.preventDefault();
        void create.run();
      }}
    >
      <h2 id="new-dataset-title">New dataset</h2>
      <Field label="Dataset name" required maxLength={200} value={name} onInput={(e: Event) => setName(valueOf(e))} />
      <TextAreaField label="Description" rows={2} maxLength={2000} value={description} onInput={(e: Event) => setDescription(valueOf(e))} />
      <ErrorNotice error={labelledError(create.error, { name: 'Dataset name', description: 'Description' })} />
      <button type="submit" disabled={create.busy}>
        {create.busy ? 'Creating…' : 'Create dataset'}
      </button>
    </form>
  );
}
