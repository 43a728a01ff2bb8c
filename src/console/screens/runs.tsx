import { routeParts } from '../router';
import { RunPage } from './runs/page';

/** '/runs/{id}': a run's own page, linked from everywhere a run is named. */
export default function Runs({ route }: { route: string }) {
  const [id] = routeParts(route, '/runs');
  if (!id) return <p class="muted">Open a run from the chat, a conversation, the admin runs, a schedule or a webhook delivery.</p>;
  return <RunPage key={id} id={id} />;
}
