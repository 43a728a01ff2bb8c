import { useState } from 'preact/hooks';
import type { components } from '../../api/schema';
import { must } from '../../api';
import { useConsole } from '../../context';
import { navigate } from '../../router';
import { useAction, useLoad } from '../../ui/async';
import { ErrorNotice, Field, LoadedView, Screen, When } from '../../ui/parts';
import { Check, SecretOnce } from '../account/parts';
import { valueOf } from '../../ui/forms';
import { ConfirmButton } from '../../ui/confirm';
import { EventChecks } from './events';
import { WebhookStatus } from './list';
import { DeliveryList } from './deliveries';

type Webhook = components['schemas']['Webhook'];

/** One webhook: edit it, rotate its secret (shown once), delete it, and its deliveries. */
export function WebhookDetail({ id }: { id: string }) {
  const { api } = useConsole();
  const hook = useLoad(() => must(api.GET('/api/webhooks/{id}', { params: { path: { id } } })), [id]);
  const [secret, setSecret] = useState<string>();
  const rotate = useAction(async () => setSecret((await must(api.POST('/api/webhooks/{id}/rotate-secret', { params: { path: { id } } }))).secret));
  const remove = useAction(async () => {
    await must(api.DELETE('/api/webhooks/{id}', { params: { path: { id } } }));
    navigate('/webhooks');
  });
  return (
    <Screen title="Webhook" actions={<a href="#/webhooks">← All webhooks</a>}>
      <LoadedView loaded={hook}>
        {(data) => (
          <>
            <div class="panel">
              <dl class="facts">
                <dt>URL</dt>
                <dd>
                  <code>{data.url}</code>
                </dd>
                <dt>Status</dt>
                <dd>
                  <WebhookStatus hook={data} />
                </dd>
                <dt>Events</dt>
                <dd>{data.events.join(', ')}</dd>
                <dt>Created</dt>
                <dd>
                  <When at={data.created_at} />
                </dd>
              </dl>
              <div class="row actions-row">
                <ConfirmButton label="Rotate secret" confirmLabel="Yes, rotate secret" question="Make a new signing secret? The old one keeps signing for 24 h." onConfirm={() => rotate.run()} />
                <ConfirmButton label="Delete" confirmLabel="Yes, delete" question="Delete this webhook and its deliveries?" onConfirm={() => remove.run()} />
              </div>
              <ErrorNotice error={rotate.error ?? remove.error} />
            </div>
            {secret && <SecretOnce title="New signing secret" secret={secret} note="The previous secret also signs deliveries for 24 hours." onDismiss={() => setSecret(undefined)} />}
            <EditWebhookForm key={data.updated_at} hook={data} onSaved={hook.reload} />
          </>
        )}
      </LoadedView>
      <DeliveryList webhookId={id} />
    </Screen>
  );
}

function EditWebhookForm({ hook, onSaved }: { hook: Webhook; onSaved: () => void }) {
  const { api } = useConsole();
  const [url, setUrl] = useState(hook.url);
  const [description, setDescription] = useState(hook.description);
  const [events, setEvents] = useState(hook.events);
  const [active, setActive] = useState(hook.is_active);
  const save = useAction(async () => {
    await must(api.PATCH('/api/webhooks/{id}', { params: { path: { id: hook.id } }, body: { url, description, events, is_active: active } }));
    onSaved();
  });
  return (
    <form
      class="panel account-form"
      aria-labelledby="edit-webhook-title"
      onSubmit={(event) => {
        event.preventDefault();
        void save.run();
      }}
    >
      <h2 id="edit-webhook-title">Edit</h2>
      <div class="row">
        <Field label="Endpoint URL" type="url" required value={url} onInput={(e: Event) => setUrl(valueOf(e))} />
        <Field label="Description" maxLength={2000} value={description} onInput={(e: Event) => setDescription(valueOf(e))} />
      </div>
      <EventChecks events={events} onChange={setEvents} />
      <p>
        <Check label="Active (deliver events to it)" checked={active} onChange={setActive} />
      </p>
      <ErrorNotice error={save.error} />
      <button type="submit" disabled={save.busy}>
        {save.busy ? 'Saving…' : 'Save changes'}
      </button>
    </form>
  );
}
