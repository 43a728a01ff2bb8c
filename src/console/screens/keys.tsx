import { useState } from 'preact/hooks';
import type { components } from '../api/schema';
import { must } from '../api';
import { useConsole } from '../context';
import { useAction, useLoad } from '../ui/async';
import { ErrorNotice, Field, LoadedView, Screen, Table, When } from '../ui/parts';
import { Badge, Check, formatNumber, SecretOnce } from './account/parts';
import { valueOf } from '../ui/forms';
import { Pager } from '../ui/pager';
import { ConfirmButton } from '../ui/confirm';
import { draftOf, LimitsEditor, LimitsFields, LimitsSummary, limitsOf, type Limits } from './account/limits';

type Key = components['schemas']['UserApiKeyInfo'];
const SCOPES = ['chat', 'kb', 'agents', 'connectors', 'admin'] as const;
const PAGE_SIZE = 20;

/** The user's API keys (DESIGN §3, §17, §18): the full key is shown once, at creation. */
export default function KeysScreen() {
  const { api } = useConsole();
  const [page, setPage] = useState(1);
  const [created, setCreated] = useState<{ name: string; key: string }>();
  const [editing, setEditing] = useState<Key>();
  const keys = useLoad(() => must(api.GET('/api/me/api-keys', { params: { query: { page, size: PAGE_SIZE } } })), [page]);
  const change = useAction(async (key: Key, body: { is_active?: boolean } & Partial<Limits>) => {
    await must(api.PATCH('/api/me/api-keys/{id}', { params: { path: { id: key.id } }, body }));
    keys.reload();
  });
  const remove = useAction(async (key: Key) => {
    await must(api.DELETE('/api/me/api-keys/{id}', { params: { path: { id: key.id } } }));
    keys.reload();
  });
  return (
    <Screen title="API keys">
      <p class="muted">Keys let programs call the API as you. A key is stored only as a hash: its full text is shown once, when it is created.</p>
      {created && (
        <SecretOnce
          title={`Your new key “${created.name}”`}
          secret={created.key}
          note="Store it somewhere safe; only its prefix is kept here."
          onDismiss={() => setCreated(undefined)}
        />
      )}
      <CreateKeyForm
        onCreated={(key) => {
          setCreated(key);
          setPage(1);
          keys.reload();
        }}
      />
      <ErrorNotice error={change.error ?? remove.error} />
      {editing && (
        <LimitsEditor
          key={editing.id}
          title={`Limits of “${editing.name}”`}
          initial={editing}
          noneHint="Empty: none of its own (your account's limits apply)"
          onSave={(limits) => change.run(editing, limits)}
          onCancel={() => setEditing(undefined)}
        />
      )}
      <LoadedView loaded={keys}>
        {(data) => (
          <>
            <div class="table-scroll">
              <Table<Key>
                caption="Your keys"
                rows={data.items}
                rowKey={(key) => key.id}
                empty="You have no API keys yet."
                columns={[
                  { header: 'Name', cell: (key) => <strong>{key.name}</strong> },
                  { header: 'Prefix', cell: (key) => <code class="nowrap">{key.key_prefix}…</code> },
                  { header: 'Scopes', cell: (key) => key.scopes ?? <span class="muted">full access</span> },
                  { header: 'Status', cell: (key) => <KeyStatus apiKey={key} /> },
                  {
                    header: 'Use',
                    cell: (key) => (
                      <div class="small">
                        <div>{formatNumber(key.total_requests)} requests</div>
                        <div class="muted">
                          last used <When at={key.last_used_at} />
                        </div>
                        <div class="muted">
                          created <When at={key.created_at} />
                        </div>
                      </div>
                    ),
                  },
                  { header: 'Limits and budget', cell: (key) => <LimitsSummary record={key} label={key.name} /> },
                  {
                    header: 'Actions',
                    cell: (key) => (
                      <div class="actions">
                        <button type="button" class="secondary" aria-label={`${key.is_active ? 'Disable' : 'Enable'} ${key.name}`} onClick={() => void change.run(key, { is_active: !key.is_active })}>
                          {key.is_active ? 'Disable' : 'Enable'}
                        </button>
                        <button type="button" class="secondary" aria-label={`Limits of ${key.name}`} onClick={() => setEditing(key)}>
                          Limits…
                        </button>
                        <ConfirmButton label="Delete" confirmLabel="Yes, delete" question={`Delete “${key.name}”? Programs using it stop working.`} onConfirm={() => remove.run(key)} />
                      </div>
                    ),
                  },
                ]}
              />
            </div>
            <Pager page={data.page} pages={data.pages} total={data.total} onPage={setPage} label="Pages of keys" noun={{ one: 'key', many: 'keys' }} />
          </>
        )}
      </LoadedView>
    </Screen>
  );
}

function KeyStatus({ apiKey }: { apiKey: Key }) {
  const expired = apiKey.expires_at !== null && new Date(apiKey.expires_at).getTime() <= Date.now();
  return (
    <div class="small">
      {expired ? <Badge tone="failed">expired</Badge> : apiKey.is_active ? <Badge tone="ok">active</Badge> : <Badge tone="waiting">disabled</Badge>}
      <div class="muted">{apiKey.expires_at ? <>expires <When at={apiKey.expires_at} /></> : 'never expires'}</div>
    </div>
  );
}

function CreateKeyForm({ onCreated }: { onCreated: (created: { name: string; key: string }) => void }) {
  const { api, session } = useConsole();
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>([]);
  const [expires, setExpires] = useState('');
  const [limits, setLimits] = useState(draftOf());
  const create = useAction(async () => {
    const created = await must(
      api.POST('/api/me/api-keys', {
        body: {
          name,
          scopes: scopes.length ? scopes.join(' ') : null,
          // The chosen day's end, in the browser's time zone.
          expires_at: expires ? new Date(`${expires}T23:59:59`).toISOString() : null,
          ...limitsOf(limits),
        },
      }),
    );
    onCreated({ name: created.name, key: created.key });
    setName('');
    setScopes([]);
    setExpires('');
    setLimits(draftOf());
  });
  const offered = SCOPES.filter((scope) => scope !== 'admin' || session.isAdmin);
  return (
    <form
      class="panel account-form"
      aria-labelledby="create-key-title"
      onSubmit={(event) => {
        event.preventDefault();
        void create.run();
      }}
    >
      <h2 id="create-key-title">Create a key</h2>
      <div class="row">
        <Field label="Key name" required maxLength={100} value={name} onInput={(e: Event) => setName(valueOf(e))} />
        <Field label="Expires on" type="date" value={expires} hint="Empty: never" onInput={(e: Event) => setExpires(valueOf(e))} />
      </div>
      <fieldset class="checks">
        <legend>Scopes (none checked: full access)</legend>
        {offered.map((scope) => (
          <Check key={scope} label={scope} checked={scopes.includes(scope)} onChange={(on) => setScopes(on ? [...scopes, scope] : scopes.filter((s) => s !== scope))} />
        ))}
      </fieldset>
      <LimitsFields draft={limits} onChange={setLimits} noneHint="Empty: none of its own" />
      <ErrorNotice error={create.error} />
      <button type="submit" disabled={create.busy}>
        {create.busy ? 'Creating…' : 'Create key'}
      </button>
    </form>
  );
}
