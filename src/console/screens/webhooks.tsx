import { routeParts } from '../router';
import { WebhookDetail } from './webhooks/detail';
import { WebhookList } from './webhooks/list';

/** Webhooks (DESIGN §10, §17): '/webhooks' lists and creates them, '/webhooks/{id}' is one with its deliveries. */
export default function WebhooksScreen({ route }: { route: string }) {
  const [id] = routeParts(route, '/webhooks');
  return id ? <WebhookDetail key={id} id={id} /> : <WebhookList />;
}
