import type { Citation } from '../../src/shared/events.js';
import { currentTurn, type ChatMessage } from '../models/types.js';

import { KNOWLEDGE_TOOL } from '../../src/shared/tools.js';

export { KNOWLEDGE_TOOL };
/** Sources cited when the answer names none explicitly and quotes none. */
const MAX_IMPLICIT_CITATIONS = 5;

interface RetrievedRecord {
  chunk_id: string;
  document_id: string;
  document_name: string;
  page?: number | null;
  content: string;
}

const isRecord = (value: unknown): value is RetrievedRecord => {
  const r = value as RetrievedRecord;
  return typeof r === 'object' && r !== null && typeof r.chunk_id === 'string' && typeof r.document_id === 'string' && typeof r.content === 'string';
};

/** Every passage the knowledge tool returned in this turn, in the order the model saw them (1-based as cited). */
export function retrievedInTurn(messages: ChatMessage[]): RetrievedRecord[] {
  const records: RetrievedRecord[] = [];
  for (const m of currentTurn(messages)) {
    if (m.role !== 'tool' || m.name !== KNOWLEDGE_TOOL || m.isError) continue;
    try {
      const parsed: unknown = JSON.parse(m.content);
      if (Array.isArray(parsed)) records.push(...parsed.filter(isRecord));
    } catch {
      // not a list of passages (an error text): nothing to cite
    }
  }
  return records;
}

const normalise = (text: string) => text.replace(/\s+/g, ' ').trim().toLowerCase();

/**
 * The passages an answer used (DESIGN §14): those it cites as `[n]` (the n-th passage returned in
 * this turn); else those it quotes; else, when it cites and quotes none, the best few it was given.
 */
export function citationsFor(answer: string, messages: ChatMessage[]): Citation[] {
  const records = retrievedInTurn(messages);
  if (records.length === 0) return [];
  const marked = [...answer.matchAll(/\[(\d{1,3})\]/g)].map((m) => records[Number(m[1]) - 1]).filter((r): r is RetrievedRecord => r !== undefined);
  const text = normalise(answer);
  const quoted = records.filter((r) => text.includes(normalise(r.content).slice(0, 200)));
  const used = marked.length > 0 ? marked : quoted.length > 0 ? quoted : records.slice(0, MAX_IMPLICIT_CITATIONS);
  const seen = new Set<string>();
  return used.flatMap((r) => {
    if (seen.has(r.chunk_id)) return [];
    seen.add(r.chunk_id);
    return [{ chunk_id: r.chunk_id, document_id: r.document_id, document_name: r.document_name, page: r.page ?? null }];
  });
}

/** The instruction a grounded run's model answers under (DESIGN §14: it never invents). */
export const GROUNDED_INSTRUCTION = [
  'Answer only from the knowledge base passages returned by knowledge_base_retrieve in this conversation turn.',
  'Cite each passage you use as [n], where n is its position in the returned list (the first passage is [1]).',
  'If the passages do not contain the answer, say that the knowledge bases do not cover it. Never add facts from elsewhere.',
].join(' ');

export const NOTHING_FOUND = 'I found nothing in the knowledge bases about that, so I cannot answer it from them.';
