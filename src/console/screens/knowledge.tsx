import { routeParts } from '../router';
import { KnowledgeBaseList } from './knowledge/list';
import { KnowledgeBasePage } from './knowledge/page';

/** '/knowledge': knowledge bases (create, delete); '/knowledge/{id}': its documents, uploads and the retrieve playground. */
export default function Knowledge({ route }: { route: string }) {
  const [id] = routeParts(route, '/knowledge');
  return id ? <KnowledgeBasePage key={id} id={id} /> : <KnowledgeBaseList />;
}
