import type { components } from '../../api/schema';

export type KnowledgeBase = components['schemas']['KnowledgeBase'];
export type Document = components['schemas']['Document'];
export type RetrievalMode = KnowledgeBase['retrieval_mode'];
export type ChunkStrategy = KnowledgeBase['chunk_strategy'];

/** The API's picklists (src/db/knowledge-models.ts), typed against the generated schema. */
export const RETRIEVAL_MODES: { value: RetrievalMode; label: string }[] = [
  { value: 'keyword', label: 'Keyword' },
  { value: 'semantic', label: 'Semantic' },
  { value: 'hybrid', label: 'Hybrid' },
];
export const CHUNK_STRATEGIES: { value: ChunkStrategy; label: string }[] = [
  { value: 'recursive', label: 'Recursive' },
  { value: 'paragraph', label: 'Paragraph' },
  { value: 'sentence', label: 'Sentence' },
  { value: 'fixed', label: 'Fixed size' },
];

/** The badge class of a knowledge base's or a document's status. */
export function statusClass(status: KnowledgeBase['status'] | Document['status']): string {
  if (status === 'ready') return 'ok';
  if (status === 'failed') return 'failed';
  return 'running';
}
