import { useState } from 'preact/hooks';
import type { paths } from '../../api/schema';
import { must } from '../../api';
import { useConsole } from '../../context';
import { useAction, useLoad } from '../../ui/async';
import { ErrorNotice, Field, LoadedView, Screen, Table, When } from '../../ui/parts';
import { formatCost } from '../account/parts';
import { valueOf } from '../../ui/forms';
import { Pager } from '../../ui/pager';
import { ConfirmButton } from '../../ui/confirm';
import './shared';

type Price = paths['/api/admin/model-prices']['get']['responses'][200]['content']['application/json']['items'][number];

/** Model prices (DESIGN §18): per million input and output tokens; runs that end afterwards carry their cost. */
export default function PricesScreen() {
  const { api } = useConsole();
  const [page, setPage] = useState(1);
  const [draft, setDraft] = useState({ model: '', input: '', output: '' });
  const prices = useLoad(() => must(api.GET('/api/admin/model-prices', { params: { query: { page, size: 50 } } })), [page]);
  const save = useAction(async () => {
    await must(
      api.PUT('/api/admin/model-prices/{model}', {
        params: { path: { model: draft.model.trim() } },
        body: { input_per_million: Number(draft.input), output_per_million: Number(draft.output) },
      }),
    );
    setDraft({ model: '', input: '', output: '' });
    prices.reload();
  });
  const remove = useAction(async (price: Price) => {
    await must(api.DELETE('/api/admin/model-prices/{model}', { params: { path: { model: price.model } } }));
    prices.reload();
  });
  return (
    <Screen title="Model prices">
      <p class="muted">Prices are per million tokens, in your one currency. Runs that end after a change are costed at the new price; a model without a price has no cost.</p>
      <form
        class="panel account-form"
        aria-labelledby="price-form-title"
        onSubmit={(event) => {
          event.preventDefault();
          void save.run();
        }}
      >
        <h2 id="price-form-title">Set a price</h2>
        <div class="row">
          <Field label="Model" required maxLength={200} placeholder="openai/gpt-4o" value={draft.model} onInput={(e: Event) => setDraft({ ...draft, model: valueOf(e) })} />
          <Field label="Input, per million tokens" type="number" required min={0} step="any" value={draft.input} onInput={(e: Event) => setDraft({ ...draft, input: valueOf(e) })} />
          <Field label="Output, per million tokens" type="number" required min={0} step="any" value={draft.output} onInput={(e: Event) => setDraft({ ...draft, output: valueOf(e) })} />
        </div>
        <ErrorNotice error={save.error} />
        <button type="submit" disabled={save.busy}>
          Save price
        </button>
      </form>
      <ErrorNotice error={remove.error} />
      <LoadedView loaded={prices}>
        {(data) => (
          <>
            <Table<Price>
              caption="Prices by model"
              rows={data.items}
              rowKey={(price) => price.model}
              empty="No model has a price yet: usage shows no cost."
              columns={[
                { header: 'Model', cell: (price) => <code>{price.model}</code> },
                { header: 'Input / million', cell: (price) => formatCost(price.input_per_million) },
                { header: 'Output / million', cell: (price) => formatCost(price.output_per_million) },
                { header: 'Updated', cell: (price) => <When at={price.updated_at} /> },
                {
                  header: 'Actions',
                  cell: (price) => (
                    <div class="actions">
                      <button
                        type="button"
                        class="secondary"
                        aria-label={`Edit the price of ${price.model}`}
                        onClick={() => setDraft({ model: price.model, input: String(price.input_per_million), output: String(price.output_per_million) })}
                      >
                        Edit
                      </button>
                      <ConfirmButton label="Delete" confirmLabel="Yes, delete" question={`Remove the price of ${price.model}?`} onConfirm={() => remove.run(price)} />
                    </div>
                  ),
                },
              ]}
            />
            <Pager page={data.page} pages={data.pages} total={data.total} onPage={setPage} label="Pages of prices" noun={{ one: 'price', many: 'prices' }} />
          </>
        )}
      </LoadedView>
    </Screen>
  );
}
