import { useState } from 'preact/hooks';
import { must } from '../../api';
import { useConsole } from '../../context';
import { navigate } from '../../router';
import { useLoad } from '../../ui/async';
import { LoadedView, Screen, When } from '../../ui/parts';
import { ConfirmButton } from '../../ui/confirm';
import { counted } from '../../ui/forms';
import { Documents } from './documents';
import { statusClass, type KnowledgeBase } from './modes';
import { Playground } from './playground';
import { KnowledgeBaseSettings } from './settings';
import { Uploader } from './uploader';
import '../builder/builder.css';
import './knowledge.css';

/** A knowledge base: its settings, uploads, documents (polled while ingesting) and the retrieve playground. */
export function KnowledgeBasePage({ id }: { id: string }) {
  const { api } = useConsole();
  const loaded = useLoad(() => must(api.GET('/api/knowledge-bases/{id}', { params: { path: { id } } })), [id]);
  const [uploads, setUploads] = useState(0);
  const remove = async () => {
    await must(api.DELETE('/api/knowledge-bases/{id}', { params: { path: { id } } }));
    navigate('/knowledge');
  };
  return (
    <Screen
      title={loaded.data?.name ?? 'Knowledge base'}
      actions={<ConfirmButton label="Delete knowledge base" question="Delete this knowledge base and its documents?" confirmLabel="Delete" onConfirm={remove} />}
    >
      <p>
        <a href="#/knowledge">← All knowledge bases</a>
      </p>
      <LoadedView loaded={loaded}>
        {(kb) => (
          <>
            <Facts kb={kb} />
            <KnowledgeBaseSettings key={kb.updated_at} kb={kb} onSaved={loaded.reload} />
            <Uploader kbId={kb.id} onUploaded={() => setUploads((n) => n + 1)} />
            <Documents kbId={kb.id} uploads={uploads} onSettled={loaded.reload} />
            <Playground kb={kb} />
          </>
        )}
      </LoadedView>
    </Screen>
  );
}

function Facts({ kb }: { kb: KnowledgeBase }) {
  return (
    <dl class="facts panel">
      {kb.description && (
        <>
          <dt>Description</dt>
          <dd>{kb.description}</dd>
        </>
      )}
      <dt>Status</dt>
      <dd>
        <span class={`badge ${statusClass(kb.status)}`}>{kb.status}</span> {kb.is_active ? '' : <span class="badge">inactive</span>}
        {kb.indexing && (
          <span>
            {' '}
            re-embedding with <code>{kb.indexing.model}</code>: <progress max={kb.indexing.total || 1} value={kb.indexing.done} aria-label="Re-embedding progress" /> {kb.indexing.done}/{kb.indexing.total}
          </span>
        )}
        {kb.error && <span class="error">{kb.error}</span>}
      </dd>
      <dt>Documents</dt>
      <dd>
        {counted(kb.document_count, 'document')}, {counted(kb.total_chunks, 'chunk')}
      </dd>
      <dt>Embedding</dt>
      <dd>
        <code>{kb.embedding_model}</code> ({kb.embedding_dimensions} dimensions){kb.rerank_model && <>, reranked by <code>{kb.rerank_model}</code></>}
      </dd>
      <dt>Chunking</dt>
      <dd>
        {kb.chunk_strategy}, {kb.chunk_size} characters, {kb.chunk_overlap} overlap
      </dd>
      <dt>Default retrieval</dt>
      <dd>{kb.retrieval_mode}</dd>
      <dt>Updated</dt>
      <dd>
        <When at={kb.updated_at} />
      </dd>
    </dl>
  );
}
