import { routeParts } from '../router';
import { MemoriesScreen } from './memories/list';

/** '/memories': all of the user's memories; '/memories/user' and '/memories/{agent id}': one namespace's (DESIGN §25). */
export default function Memories({ route }: { route: string }) {
  const [namespace] = routeParts(route, '/memories');
  return <MemoriesScreen namespace={namespace} />;
}
