import { routeParts } from '../router';
import { AgentList } from './agents/list';
import { AgentPage, NewAgent } from './agents/page';

/** '/agents': the list; '/agents/new': the form; '/agents/{id}': edit one, its versions, delete. */
export default function Agents({ route }: { route: string }) {
  const [id] = routeParts(route, '/agents');
  if (!id) return <AgentList />;
  if (id === 'new') return <NewAgent />;
  return <AgentPage key={id} id={id} />;
}
