import { routeParts } from '../router';
import { ConversationList } from './conversations/list';
import { ConversationView } from './conversations/view';

/** '/conversations': the user's conversations; '/conversations/{id}': one with its messages. */
export default function Conversations({ route }: { route: string }) {
  const [id] = routeParts(route, '/conversations');
  return id ? <ConversationView key={id} id={id} /> : <ConversationList />;
}
