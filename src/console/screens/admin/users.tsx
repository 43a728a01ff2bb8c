import { useState } from 'preact/hooks';
import type { components } from '../../api/schema';
import { must } from '../../api';
import { useConsole } from '../../context';
import { useAction, useLoad } from '../../ui/async';
import { ErrorNotice, Field, LoadedView, Screen, SelectField, Table, When } from '../../ui/parts';
import { Badge, SecretOnce } from '../account/parts';
import { valueOf } from '../../ui/forms';
import { Pager } from '../../ui/pager';
import { ConfirmButton } from '../../ui/confirm';
import { LimitsEditor, LimitsSummary, type Limits } from '../account/limits';
import './shared';

type User = components['schemas']['AdminUser'];
type Role = User['role'];
const ROLES = [
  { value: 'admin', label: 'admin' },
  { value: 'member', label: 'member' },
  { value: 'restricted', label: 'restricted' },
];

/** Users (DESIGN §9): find, create (a generated password shown once), change role, disable/enable, limits, delete. */
export default function UsersScreen() {
  const { api, session } = useConsole();
  const [filters, setFilters] = useState({ q: '', role: '', active: '' });
  const [page, setPage] = useState(1);
  const [editing, setEditing] = useState<User>();
  const [password, setPassword] = useState<{ email: string; password: string }>();
  const users = useLoad(
    () =>
      must(
        api.GET('/api/admin/users', {
          params: { query: { page, size: 20, q: filters.q || undefined, role: (filters.role || undefined) as Role | undefined, is_active: filters.active ? filters.active === 'true' : undefined } },
        }),
      ),
    [page, filters],
  );
  const change = useAction(async (user: User, body: { role?: Role; is_active?: boolean } & Partial<Limits>) => {
    await must(api.PATCH('/api/admin/users/{id}', { params: { path: { id: user.id } }, body }));
    users.reload();
  });
  const remove = useAction(async (user: User) => {
    await must(api.DELETE('/api/admin/users/{id}', { params: { path: { id: user.id } } }));
    users.reload();
  });
  const filter = (next: Partial<typeof filters>) => {
    setFilters({ ...filters, ...next });
    setPage(1);
  };
  return (
    <Screen title="Users">
      {password && <SecretOnce title={`Password for ${password.email}`} secret={password.password} note="Give it to the user; they sign in with it." onDismiss={() => setPassword(undefined)} />}
      <CreateUserForm
        onCreated={(created) => {
          if (created.password) setPassword({ email: created.email, password: created.password });
          users.reload();
        }}
      />
      <div class="row filters" role="search" aria-label="Filter users">
        <Field label="Email contains" type="search" value={filters.q} onInput={(e: Event) => filter({ q: valueOf(e) })} />
        <SelectField label="Filter by role" options={[{ value: '', label: 'Any role' }, ...ROLES]} value={filters.role} onChange={(e: Event) => filter({ role: valueOf(e) })} />
        <SelectField
          label="Filter by state"
          options={[
            { value: '', label: 'Any' },
            { value: 'true', label: 'Active' },
            { value: 'false', label: 'Disabled' },
          ]}
          value={filters.active}
          onChange={(e: Event) => filter({ active: valueOf(e) })}
        />
      </div>
      <ErrorNotice error={change.error ?? remove.error} />
      {editing && (
        <LimitsEditor
          key={editing.id}
          title={`Limits of ${editing.email}`}
          initial={editing}
          noneHint="Empty: none (the platform's default applies)"
          onSave={(limits) => change.run(editing, limits)}
          onCancel={() => setEditing(undefined)}
        />
      )}
      <LoadedView loaded={users}>
        {(data) => (
          <>
            <div class="table-scroll">
              <Table<User>
                caption="Users"
                rows={data.items}
                rowKey={(user) => user.id}
                empty="No user matches."
                columns={[
                  {
                    header: 'User',
                    cell: (user) => (
                      <div>
                        <strong>{user.email}</strong>
                        <div class="muted small">{user.name}</div>
                      </div>
                    ),
                  },
                  {
                    header: 'Role',
                    cell: (user) => (
                      <select aria-label={`Role of ${user.email}`} value={user.role} disabled={user.id === session.user?.id} onChange={(e) => void change.run(user, { role: valueOf(e) as Role })}>
                        {ROLES.map((role) => (
                          <option key={role.value} value={role.value}>
                            {role.label}
                          </option>
                        ))}
                      </select>
                    ),
                  },
                  { header: 'State', cell: (user) => (user.is_active ? <Badge tone="ok">active</Badge> : <Badge tone="failed">disabled</Badge>) },
                  { header: 'Limits and budget', cell: (user) => <LimitsSummary record={user} label={user.email} /> },
                  { header: 'Created', cell: (user) => <When at={user.created_at} /> },
                  {
                    header: 'Actions',
                    cell: (user) =>
                      user.id === session.user?.id ? (
                        <span class="muted small">you</span>
                      ) : (
                        <div class="actions">
                          <button type="button" class="secondary" aria-label={`${user.is_active ? 'Disable' : 'Enable'} ${user.email}`} onClick={() => void change.run(user, { is_active: !user.is_active })}>
                            {user.is_active ? 'Disable' : 'Enable'}
                          </button>
                          <button type="button" class="secondary" aria-label={`Limits of ${user.email}`} onClick={() => setEditing(user)}>
                            Limits…
                          </button>
                          <ConfirmButton label="Delete" confirmLabel="Yes, delete" question={`Delete ${user.email} and everything they own?`} onConfirm={() => remove.run(user)} />
                        </div>
                      ),
                  },
                ]}
              />
            </div>
            <Pager page={data.page} pages={data.pages} total={data.total} onPage={setPage} label="Pages of users" noun={{ one: 'user', many: 'users' }} />
          </>
        )}
      </LoadedView>
    </Screen>
  );
}

function CreateUserForm({ onCreated }: { onCreated: (user: { email: string; password?: string }) => void }) {
  const { api } = useConsole();
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('member');
  const [password, setPassword] = useState('');
  const create = useAction(async () => {
    const created = await must(api.POST('/api/admin/users', { body: { email, role, ...(name.trim() ? { name } : {}), ...(password ? { password } : {}) } }));
    onCreated(created);
    setEmail('');
    setName('');
    setPassword('');
  });
  return (
    <form
      class="panel account-form"
      aria-labelledby="create-user-title"
      onSubmit={(event) => {
        event.preventDefault();
        void create.run();
      }}
    >
      <h2 id="create-user-title">Add a user</h2>
      <div class="row">
        <Field label="Email" type="email" required value={email} autoComplete="off" onInput={(e: Event) => setEmail(valueOf(e))} />
        <Field label="Name" maxLength={100} value={name} onInput={(e: Event) => setName(valueOf(e))} />
        <SelectField label="Role" options={ROLES} value={role} onChange={(e: Event) => setRole(valueOf(e) as Role)} />
        <Field label="Password" type="password" minLength={8} autoComplete="new-password" value={password} hint="Empty: one is generated and shown once" onInput={(e: Event) => setPassword(valueOf(e))} />
      </div>
      <ErrorNotice error={create.error} />
      <button type="submit" disabled={create.busy}>
        {create.busy ? 'Adding…' : 'Add user'}
      </button>
    </form>
  );
}
