import { useState } from 'preact/hooks';
import { must } from '../../api';
import { useConsole } from '../../context';
import { navigate } from '../../router';
import { useAction, useLoad } from '../../ui/async';
import { ConfirmButton } from '../../ui/confirm';
import { counted } from '../../ui/forms';
import { Pager, PAGE_SIZE } from '../../ui/pager';
import { ErrorNotice, LoadedView, Screen, Table, When } from '../../ui/parts';
import { EvalsTabs } from './tabs';
import { expectedText, type DatasetItem } from './types';
import { ITEM_EXTENSIONS, uploadItems } from './upload';

/** One dataset: its facts, its items (paged), an upload of more, a new eval of it, delete. */
export function DatasetPage({ id }: { id: string }) {
  const { api } = useConsole();
  const dataset = useLoad(() => must(api.GET('/api/datasets/{id}', { params: { path: { id } } })), [id]);
  const [page, setPage] = useState(1);
  const items = useLoad(() => must(api.GET('/api/datasets/{id}/items', { params: { path: { id }, query: { page, size: PAGE_SIZE } } })), [id, page]);
  const remove = useAction(async () => {
    await must(api.DELETE('/api/datasets/{id}', { params: { path: { id } } }));
    navigate('/evals/datasets');
  });
  const removeItem = async (itemId: string) => {
    await must(api.DELETE('/api/datasets/{id}/items/{itemId}', { params: { path: { id, itemId } } }));
    uploaded();
  };
  const uploaded = () => {
    dataset.reload();
    items.reload();
  };
  return (
    <Screen title={dataset.data ? `Dataset: ${dataset.data.name}` : 'Dataset'} actions={<EvalsTabs current="datasets" />}>
      <LoadedView loaded={dataset}>
        {(data) => (
          <div class="panel evals-panel">
            {data.description && <p>{data.description}</p>}
            <dl class="facts">
              <dt>Items</dt>
              <dd data-testid="item-count">{data.item_count}</dd>
              <dt>Created</dt>
              <dd>
                <When at={data.created_at} />
              </dd>
            </dl>
            <div class="row actions-row evals-actions">
              <a class="button-link" href={`#/evals/new/${id}`}>
                New eval of this dataset
              </a>
              <a href={`#/evals/for/${id}`}>Its evals</a>
              <ConfirmButton label="Delete dataset" confirmLabel="Yes, delete" question="Delete this dataset and its items? Evals of it keep their results." onConfirm={() => remove.run()} />
            </div>
            <ErrorNotice error={remove.error} />
          </div>
        )}
      </LoadedView>
      <ItemsUpload datasetId={id} onUploaded={uploaded} />
      <section aria-labelledby="items-title">
        <h2 id="items-title">Items</h2>
        <LoadedView loaded={items}>
          {(data) => (
            <>
              <div class="table-scroll">
                <Table<DatasetItem>
                  caption="This dataset's items, in the order they were added"
                  rows={data.items}
                  rowKey={(item) => item.id}
                  empty="No items yet: upload a JSONL, CSV or JSON file above."
                  columns={[
                    { header: '#', cell: (item) => (data.page - 1) * data.size + data.items.indexOf(item) + 1 },
                    { header: 'Question', cell: (item) => <span class="eval-question">{item.input.q}</span> },
                    { header: 'Expected', cell: (item) => <code>{expectedText(item.expected)}</code> },
                    {
                      header: 'Metadata',
                      cell: (item) => (Object.keys(item.metadata).length ? <code class="small">{JSON.stringify(item.metadata)}</code> : <span class="muted">—</span>),
                    },
                    {
                      header: 'Remove',
                      cell: (item) => <ConfirmButton label="Delete" confirmLabel="Yes, delete" question="Delete this item? Evals already made keep their copy." onConfirm={() => removeItem(item.id)} />,
                    },
                  ]}
                />
              </div>
              <Pager page={data.page} pages={data.pages} total={data.total} onPage={setPage} label="Pages of items" noun={{ one: 'item', many: 'items' }} />
            </>
          )}
        </LoadedView>
      </section>
    </Screen>
  );
}

/** Adds the items of one file; the API takes all of them or none, and its refusal is shown as it names the item. */
function ItemsUpload({ datasetId, onUploaded }: { datasetId: string; onUploaded: () => void }) {
  const { authorizedFetch } = useConsole();
  const [file, setFile] = useState<File>();
  const [pickerKey, setPickerKey] = useState(0);
  const [added, setAdded] = useState<string>();
  const upload = useAction(async () => {
    if (!file) return;
    setAdded(undefined);
    const answer = await uploadItems(authorizedFetch, datasetId, file);
    setAdded(`${file.name}: ${counted(answer.added, 'item')} added; the dataset has ${counted(answer.item_count, 'item')}.`);
    setFile(undefined);
    setPickerKey((n) => n + 1);
    onUploaded();
  });
  return (
    <form
      class="panel evals-panel"
      aria-labelledby="items-upload-title"
      onSubmit={(event) => {
        event.preventDefault();
        void upload.run();
      }}
    >
      <h2 id="items-upload-title">Add items</h2>
      <p class="muted small">
        JSONL: one <code>{'{"input": {"q": "…"}, "expected": "…", "metadata": {…}}'}</code> per line. CSV: a header row with <code>q</code>, optional <code>expected</code> and <code>image_ids</code>; other
        columns become metadata. JSON: a list of items.
      </p>
      <div class="row">
        <div class="field">
          <label for="items-file">Items file (.jsonl, .csv, .json)</label>
          <input
            key={pickerKey}
            id="items-file"
            type="file"
            accept={ITEM_EXTENSIONS}
            disabled={upload.busy}
            onChange={(e) => {
              setFile((e.currentTarget as HTMLInputElement).files?.[0]);
              upload.clear();
            }}
          />
        </div>
        <div class="field">
          <button type="submit" disabled={upload.busy || !file}>
            {upload.busy ? 'Uploading…' : 'Upload items'}
          </button>
        </div>
      </div>
      {added && (
        <p class="notice" role="status">
          {added}
        </p>
      )}
      <ErrorNotice error={upload.error} />
    </form>
  );
}
