import { useState } from 'preact/hooks';
import type { components } from '../../api/schema';
import { must } from '../../api';
import { useConsole } from '../../context';
import { useAction, useLoad } from '../../ui/async';
import { ErrorNotice, LoadedView, Table, When } from '../../ui/parts';
import { Badge } from '../account/parts';
import { Pager } from '../../ui/pager';
import { RunLink } from '../runs/links';

type Delivery = components['schemas']['WebhookDelivery'];
const TONES: Record<Delivery['status'], string> = { delivered: 'succeeded', failed: 'failed', pending: 'waiting' };

/** A webhook's deliveries, newest first, each with Redeliver (same webhook-id, fresh attempts). */
export function DeliveryList({ webhookId }: { webhookId: string }) {
  const { api } = useConsole();
  const [page, setPage] = useState(1);
  const deliveries = useLoad(() => must(api.GET('/api/webhooks/{id}/deliveries', { params: { path: { id: webhookId }, query: { page, size: 20 } } })), [webhookId, page]);
  const redeliver = useAction(async (delivery: Delivery) => {
    await must(api.POST('/api/webhooks/{id}/deliveries/{deliveryId}/redeliver', { params: { path: { id: webhookId, deliveryId: delivery.id } } }));
    deliveries.reload();
  });
  return (
    <section aria-labelledby="deliveries-title">
      <div class="screen-header">
        <h2 id="deliveries-title">Deliveries</h2>
        <button type="button" class="secondary" onClick={deliveries.reload} disabled={deliveries.loading}>
          Refresh
        </button>
      </div>
      <ErrorNotice error={redeliver.error} />
      <LoadedView loaded={deliveries}>
        {(data) => (
          <>
            <div class="table-scroll">
              <Table<Delivery>
                caption="Deliveries, newest first"
                rows={data.items}
                rowKey={(delivery) => delivery.id}
                empty="No deliveries yet: they appear when one of your runs sends an event this webhook subscribes to."
                columns={[
                  { header: 'When', cell: (d) => <When at={d.created_at} /> },
                  { header: 'Event', cell: (d) => <code class="nowrap">{d.event}</code> },
                  { header: 'Run', cell: (d) => (d.run_id ? <RunLink id={d.run_id} /> : '—') },
                  { header: 'Status', cell: (d) => <Badge tone={TONES[d.status]}>{d.status}</Badge> },
                  { header: 'Attempts', cell: (d) => d.attempts },
                  { header: 'Response', cell: (d) => (d.last_status_code ?? <span class="muted">—</span>) },
                  {
                    header: 'Last error / next attempt',
                    cell: (d) => (
                      <div class="small">
                        {d.last_error && <div>{d.last_error}</div>}
                        {d.next_attempt_at && (
                          <div class="muted">
                            next <When at={d.next_attempt_at} />
                          </div>
                        )}
                      </div>
                    ),
                  },
                  {
                    header: 'Actions',
                    cell: (d) => (
                      <button type="button" class="secondary" aria-label={`Redeliver the ${d.event} delivery of ${new Date(d.created_at).toLocaleString()}`} disabled={redeliver.busy} onClick={() => void redeliver.run(d)}>
                        Redeliver
                      </button>
                    ),
                  },
                ]}
              />
            </div>
            <Pager page={data.page} pages={data.pages} total={data.total} onPage={setPage} label="Pages of deliveries" noun={{ one: 'delivery', many: 'deliveries' }} />
          </>
        )}
      </LoadedView>
    </section>
  );
}
