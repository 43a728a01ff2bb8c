import { must } from '../../api';
import { useConsole } from '../../context';
import { useLoad } from '../../ui/async';
import '../account/account.css';
import './admin.css';

/** The first 100 users by email, to name users in the admin views (an id not among them is shown as is). */
export function useUserNames() {
  const { api } = useConsole();
  const users = useLoad(() => must(api.GET('/api/admin/users', { params: { query: { size: 100 } } })), []);
  const names = new Map((users.data?.items ?? []).map((user) => [user.id, user.email]));
  return { users: users.data?.items ?? [], nameOf: (id: string | null | undefined) => (id ? (names.get(id) ?? id.slice(0, 8)) : '—') };
}
