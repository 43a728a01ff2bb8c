import { useState } from 'preact/hooks';
import { must } from '../../api';
import { useConsole } from '../../context';
import { useAction } from '../../ui/async';
import { ErrorNotice, Field, SelectField, TextAreaField } from '../../ui/parts';
import { requiredInteger, valueOf } from '../../ui/forms';
import { CHUNK_STRATEGIES, RETRIEVAL_MODES, type ChunkStrategy, type KnowledgeBase, type RetrievalMode } from './modes';

const EMPTY = { name: '', description: '', embeddingModel: '', rerankModel: '', chunkStrategy: 'recursive' as ChunkStrategy, chunkSize: '1000', chunkOverlap: '200', retrievalMode: 'hybrid' as RetrievalMode };

export function CreateKnowledgeBase({ onCreated }: { onCreated: (kb: KnowledgeBase) => void }) {
  const { api } = useConsole();
  const [draft, setDraft] = useState(EMPTY);
  const set = (field: keyof typeof EMPTY) => (event: Event) => setDraft((previous) => ({ ...previous, [field]: valueOf(event) }));
  const create = useAction(async () => {
    const created = await must(
      api.POST('/api/knowledge-bases', {
        body: {
          name: draft.name,
          description: draft.description,
          chunk_strategy: draft.chunkStrategy,
          chunk_size: requiredInteger(draft.chunkSize, 'Chunk size'),
          chunk_overlap: requiredInteger(draft.chunkOverlap, 'Chunk overlap'),
          retrieval_mode: draft.retrievalMode,
          ...(draft.embeddingModel.trim() ? { embedding_model: draft.embeddingModel.trim() } : {}),
          ...(draft.rerankModel.trim() ? { rerank_model: draft.rerankModel.trim() } : {}),
        },
      }),
    );
    setDraft(EMPTY);
    onCreated(created);
  });
  return (
    <form
      class="panel"
      aria-labelledby="new-kb-title"
      onSubmit={(event) => {
        event.preventDefault();
        void create.run();
      }}
    >
      <h2 id="new-kb-title">New knowledge base</h2>
      <div class="form-grid">
        <Field label="Name" required maxLength={200} value={draft.name} onInput={set('name')} />
        <Field label="Embedding model" placeholder="local" value={draft.embeddingModel} onInput={set('embeddingModel')} hint="Empty: local (built in)" />
        <Field label="Rerank model" value={draft.rerankModel} onInput={set('rerankModel')} hint="Optional: a gateway rerank model" />
        <SelectField label="Default retrieval" value={draft.retrievalMode} options={RETRIEVAL_MODES} onChange={set('retrievalMode')} />
        <SelectField label="Chunking" value={draft.chunkStrategy} options={CHUNK_STRATEGIES} onChange={set('chunkStrategy')} />
        <Field label="Chunk size" type="number" min={100} max={8000} required value={draft.chunkSize} onInput={set('chunkSize')} hint="Characters, 100-8000" />
        <Field label="Chunk overlap" type="number" min={0} required value={draft.chunkOverlap} onInput={set('chunkOverlap')} hint="Less than the chunk size" />
        <div class="wide">
          <TextAreaField label="Description" rows={2} maxLength={2000} value={draft.description} onInput={set('description')} />
        </div>
      </div>
      <ErrorNotice error={create.error} />
      <button type="submit" disabled={create.busy}>
        {create.busy ? 'Creating…' : 'Create knowledge base'}
      </button>
    </form>
  );
}
