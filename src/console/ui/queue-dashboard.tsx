import { must, type ApiClient } from '../api';
import { useConsole } from '../context';
import { useAction } from './async';
import { ErrorNotice } from './parts';

/**
 * Opens the queue dashboard (bull-board) in a new tab from this session: the API hands an admin a
 * one-time ticket, which a form posts to the dashboard (a POST from this origin, so the ticket is in
 * no URL, history or log) in exchange for the dashboard's own cookie.
 */
export function QueueDashboardButton() {
  const { api } = useConsole();
  const open = useAction(() => openQueueDashboard(api));
  return (
    <>
      <button type="button" class="nav-button" onClick={() => void open.run()} disabled={open.busy}>
        Queue dashboard ↗
      </button>
      <ErrorNotice error={open.error} />
    </>
  );
}

async function openQueueDashboard(api: ApiClient): Promise<void> {
  // The tab opens during the click (a popup blocker allows that); the form is posted once the ticket is here.
  const tab = window.open('about:blank', '_blank');
  try {
    const { ticket, enter_url } = await must(api.POST('/api/admin/dashboard-ticket'));
    const target = tab ?? window;
    const form = target.document.createElement('form');
    form.method = 'post';
    form.action = new URL(enter_url, location.origin).href;
    const field = target.document.createElement('input');
    field.type = 'hidden';
    field.name = 'ticket';
    field.value = ticket;
    form.append(field);
    target.document.body.append(form);
    form.submit();
    if (tab) tab.opener = null;
  } catch (err) {
    tab?.close();
    throw err;
  }
}
