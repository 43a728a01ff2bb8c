import { useState } from 'preact/hooks';
import { must } from '../../api';
import { useConsole } from '../../context';
import { useAction } from '../../ui/async';
import { ErrorNotice, Field, SelectField, TextAreaField } from '../../ui/parts';
import { valueOf } from '../../ui/forms';
import { RETRIEVAL_MODES, type KnowledgeBase, type RetrievalMode } from './modes';

interface Draft {
  name: string;
  description: string;
  retrievalMode: RetrievalMode;
  embeddingModel: string;
  rerankModel: string;
}

const draftOf = (kb: KnowledgeBase): Draft => ({ name: kb.name, description: kb.description ?? '', retrievalMode: kb.retrieval_mode, embeddingModel: kb.embedding_model, rerankModel: kb.rerank_model ?? '' });

/** The settings PATCH /api/knowledge-bases/{id} takes; only what changed is sent (a new embedding model re-embeds every document). */
export function KnowledgeBaseSettings({ kb, onSaved }: { kb: KnowledgeBase; onSaved: () => void }) {
  const { api } = useConsole();
  const [draft, setDraft] = useState<Draft | undefined>();
  const save = useAction(async (changes: Draft) => {
    const body = changedFields(kb, changes);
    if (Object.keys(body).length > 0) await must(api.PATCH('/api/knowledge-bases/{id}', { params: { path: { id: kb.id } }, body }));
    setDraft(undefined);
    onSaved();
  });
  if (!draft) {
    return (
      <p>
        <button type="button" class="secondary" onClick={() => setDraft(draftOf(kb))}>
          Edit settings
        </button>
      </p>
    );
  }
  const set = (field: keyof Draft) => (event: Event) => setDraft({ ...draft, [field]: valueOf(event) });
  return (
    <form
      class="panel"
      aria-labelledby="kb-settings-title"
      onSubmit={(event) => {
        event.preventDefault();
        void save.run(draft);
      }}
    >
      <h2 id="kb-settings-title">Settings</h2>
      <div class="form-grid">
        <Field label="Name" required maxLength={200} value={draft.name} onInput={set('name')} />
        <SelectField label="Default retrieval" value={draft.retrievalMode} options={RETRIEVAL_MODES} onChange={set('retrievalMode')} />
        <Field label="Embedding model" required value={draft.embeddingModel} onInput={set('embeddingModel')} hint="A new model re-embeds every document in the background; retrieval keeps answering meanwhile" />
        <Field label="Rerank model" value={draft.rerankModel} onInput={set('rerankModel')} hint="Empty: no reranking" />
        <div class="wide">
          <TextAreaField label="Description" rows={2} maxLength={2000} value={draft.description} onInput={set('description')} />
        </div>
      </div>
      <ErrorNotice error={save.error} />
      <div class="actions">
        <button type="submit" disabled={save.busy}>
          {save.busy ? 'Saving…' : 'Save settings'}
        </button>
        <button type="button" class="secondary" onClick={() => setDraft(undefined)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function changedFields(kb: KnowledgeBase, draft: Draft) {
  const rerank = draft.rerankModel.trim() || null;
  return {
    ...(draft.name.trim() !== kb.name ? { name: draft.name.trim() } : {}),
    ...(draft.description !== (kb.description ?? '') ? { description: draft.description } : {}),
    ...(draft.retrievalMode !== kb.retrieval_mode ? { retrieval_mode: draft.retrievalMode } : {}),
    ...(draft.embeddingModel.trim() !== kb.embedding_model ? { embedding_model: draft.embeddingModel.trim() } : {}),
    ...(rerank !== kb.rerank_model ? { rerank_model: rerank } : {}),
  };
}
