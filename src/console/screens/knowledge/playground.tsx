import { useState } from 'preact/hooks';
import type { components } from '../../api/schema';
import { must } from '../../api';
import { useConsole } from '../../context';
import { asError, useAction } from '../../ui/async';
import { ErrorNotice, Field } from '../../ui/parts';
import { CheckGroup } from '../builder/checks';
import { requiredInteger, valueOf } from '../../ui/forms';
import { RETRIEVAL_MODES, type KnowledgeBase, type RetrievalMode } from './modes';

type Result = components['schemas']['RetrieveResult'];
type Hit = Result['records'][number];

/** One passage found by one or more modes: its score and rank in each. */
interface Passage {
  hit: Hit;
  scores: Partial<Record<RetrievalMode, { score: number; rank: number }>>;
  bestRank: number;
}

interface Outcome {
  modes: RetrievalMode[];
  passages: Passage[];
  failures: { mode: RetrievalMode; message: string }[];
  reranked: Partial<Record<RetrievalMode, boolean | null>>;
}

/** Passages of every mode's answer, each once, by its best rank in any mode. */
function merge(answers: { mode: RetrievalMode; result: Result }[]): Passage[] {
  const byChunk = new Map<string, Passage>();
  for (const { mode, result } of answers) {
    result.records.forEach((hit, index) => {
      const passage = byChunk.get(hit.chunk_id) ?? { hit, scores: {}, bestRank: index + 1 };
      passage.scores[mode] = { score: hit.score, rank: index + 1 };
      passage.bestRank = Math.min(passage.bestRank, index + 1);
      byChunk.set(hit.chunk_id, passage);
    });
  }
  return [...byChunk.values()].sort((a, b) => a.bestRank - b.bestRank);
}

/** Asks the knowledge base in each chosen mode at once and shows the passages side by side with each mode's score. */
export function Playground({ kb }: { kb: KnowledgeBase }) {
  const { api } = useConsole();
  const [query, setQuery] = useState('');
  const [topK, setTopK] = useState('5');
  const [modes, setModes] = useState<RetrievalMode[]>(RETRIEVAL_MODES.map((m) => m.value));
  const [outcome, setOutcome] = useState<Outcome>();
  const search = useAction(async () => {
    if (modes.length === 0) throw new Error('Choose at least one retrieval mode');
    const top_k = requiredInteger(topK, 'Results per mode');
    const chosen = RETRIEVAL_MODES.map((m) => m.value).filter((mode) => modes.includes(mode));
    const settled = await Promise.allSettled(chosen.map((mode) => must(api.POST('/api/knowledge-bases/{id}/retrieve', { params: { path: { id: kb.id } }, body: { query, top_k, retrieval_mode: mode } }))));
    const answers = settled.flatMap((s, i) => (s.status === 'fulfilled' ? [{ mode: chosen[i]!, result: s.value }] : []));
    const failures = settled.flatMap((s, i) => (s.status === 'rejected' ? [{ mode: chosen[i]!, message: asError(s.reason).message }] : []));
    setOutcome({ modes: answers.map((a) => a.mode), passages: merge(answers), failures, reranked: Object.fromEntries(answers.map((a) => [a.mode, a.result.reranked])) });
  });
  return (
    <section class="panel playground" aria-labelledby="playground-title">
      <h2 id="playground-title">Retrieve playground</h2>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void search.run();
        }}
      >
        <div class="row">
          <div class="grow">
            <Field label="Query" required maxLength={2000} value={query} onInput={(e) => setQuery(valueOf(e))} />
          </div>
          <Field label="Results per mode" type="number" min={1} max={50} required value={topK} onInput={(e) => setTopK(valueOf(e))} />
        </div>
        <div class="row">
          <CheckGroup legend="Modes" options={RETRIEVAL_MODES} chosen={modes} onChange={(chosen) => setModes(chosen as RetrievalMode[])} />
          <div class="field">
            <button type="submit" disabled={search.busy}>
              {search.busy ? 'Searching…' : 'Search'}
            </button>
          </div>
        </div>
      </form>
      <ErrorNotice error={search.error} />
      {outcome && <Results outcome={outcome} kb={kb} />}
    </section>
  );
}

function Results({ outcome, kb }: { outcome: Outcome; kb: KnowledgeBase }) {
  return (
    <div class="results">
      {outcome.failures.map((failure) => (
        <p key={failure.mode} class="error" role="alert">
          {failure.mode}: {failure.message}
        </p>
      ))}
      {kb.rerank_model && (
        <p class="muted">
          Reranked by <code>{kb.rerank_model}</code>: {outcome.modes.map((mode) => `${mode} ${outcome.reranked[mode] ? 'yes' : 'no'}`).join(', ')}
        </p>
      )}
      {outcome.passages.length === 0 ? (
        <p class="empty">No passage matched.</p>
      ) : (
        <table class="passages">
          <caption>Passages found ({outcome.passages.length}), best rank first</caption>
          <thead>
            <tr>
              <th scope="col">Passage</th>
              {outcome.modes.map((mode) => (
                <th key={mode} scope="col" class="score">
                  {mode} score
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {outcome.passages.map((passage) => (
              <tr key={passage.hit.chunk_id}>
                <td>
                  <div class="source">
                    {passage.hit.document_name}
                    {passage.hit.page !== null && ` · page ${passage.hit.page}`}
                  </div>
                  <div class="passage">{passage.hit.content}</div>
                </td>
                {outcome.modes.map((mode) => {
                  const found = passage.scores[mode];
                  return (
                    <td key={mode} class="score">
                      {found ? (
                        <>
                          <span class="mono">{found.score.toFixed(4)}</span> <span class="muted">#{found.rank}</span>
                        </>
                      ) : (
                        <span class="muted" title="Not among this mode's results">
                          —
                        </span>
                      )}
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
