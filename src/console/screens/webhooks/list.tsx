import { useState } from 'preact/hooks';
import type { components } from '../../api/schema';
import { must } from '../../api';
import { useConsole } from '../../context';
import { useAction, useLoad } from '../../ui/async';
import { ErrorNotice, Field, LoadedView, Screen, Table, When } from '../../ui/parts';
import { Badge, SecretOnce } from '../account/parts';
import { valueOf } from '../../ui/forms';
import { Pager } from '../../ui/pager';
import { DEFAULT_EVENTS, EventChecks } from './events';

type Webhook = components['schemas']['Webhook'];

export function WebhookList() {
  const { api } = useConsole();
  const [page, setPage] = useState(1);
  const [created, setCreated] = useState<{ url: string; secret: string }>();
  const hooks = useLoad(() => must(api.GET('/api/webhooks', { params: { query: { page, size: 20 } } })), [page]);
  return (
    <Screen title="Webhooks">
      <p class="muted">Each endpoint receives a signed POST (Standard Webhooks) when one of your runs ends or waits for approval.</p>
      {created && (
        <SecretOnce
          title={`Signing secret for ${created.url}`}
          secret={created.secret}
          note="Your receiver verifies each delivery's webhook-signature with it."
          onDismiss={() => setCreated(undefined)}
        />
      )}
      <CreateWebhookForm
        onCreated={(hook) => {
          setCreated(hook);
          setPage(1);
          hooks.reload();
        }}
      />
      <LoadedView loaded={hooks}>
        {(data) => (
          <>
            <div class="table-scroll">
              <Table<Webhook>
                caption="Your webhook endpoints"
                rows={data.items}
                rowKey={(hook) => hook.id}
                empty="You have no webhooks yet."
                columns={[
                  {
                    header: 'Endpoint',
                    cell: (hook) => (
                      <div>
                        <a href={`#/webhooks/${hook.id}`}>
                          <code>{hook.url}</code>
                        </a>
                        {hook.description && <div class="muted small">{hook.description}</div>}
                      </div>
                    ),
                  },
                  { header: 'Events', cell: (hook) => <span class="small">{hook.events.join(', ')}</span> },
                  { header: 'Status', cell: (hook) => <WebhookStatus hook={hook} /> },
                  { header: 'Created', cell: (hook) => <When at={hook.created_at} /> },
                ]}
              />
            </div>
            <Pager page={data.page} pages={data.pages} total={data.total} onPage={setPage} label="Pages of webhooks" noun={{ one: 'webhook', many: 'webhooks' }} />
          </>
        )}
      </LoadedView>
    </Screen>
  );
}

export function WebhookStatus({ hook }: { hook: Webhook }) {
  return (
    <div class="small">
      {hook.is_active ? <Badge tone="ok">active</Badge> : <Badge tone="failed">disabled</Badge>}
      {hook.disabled_reason && <div class="muted">{hook.disabled_reason}</div>}
      {hook.consecutive_failures > 0 && <div class="muted">{hook.consecutive_failures} failures in a row</div>}
    </div>
  );
}

function CreateWebhookForm({ onCreated }: { onCreated: (created: { url: string; secret: string }) => void }) {
  const { api } = useConsole();
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState(DEFAULT_EVENTS);
  const create = useAction(async () => {
    const hook = await must(api.POST('/api/webhooks', { body: { url, description, events } }));
    onCreated({ url: hook.url, secret: hook.secret });
    setUrl('');
    setDescription('');
    setEvents(DEFAULT_EVENTS);
  });
  return (
    <form
      class="panel account-form"
      aria-labelledby="create-webhook-title"
      onSubmit={(event) => {
        event.preventDefault();
        void create.run();
      }}
    >
      <h2 id="create-webhook-title">Add an endpoint</h2>
      <div class="row">
        <Field label="Endpoint URL" type="url" required placeholder="https://example.com/hooks/agent-runs" value={url} onInput={(e: Event) => setUrl(valueOf(e))} />
        <Field label="Description" maxLength={2000} value={description} onInput={(e: Event) => setDescription(valueOf(e))} />
      </div>
      <EventChecks events={events} onChange={setEvents} />
      <ErrorNotice error={create.error} />
      <button type="submit" disabled={create.busy}>
        {create.busy ? 'Adding…' : 'Add endpoint'}
      </button>
    </form>
  );
}
