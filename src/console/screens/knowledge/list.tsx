import { useState } from 'preact/hooks';
import { must } from '../../api';
import { useConsole } from '../../context';
import { navigate } from '../../router';
import { useLoad } from '../../ui/async';
import { LoadedView, Screen, Table, When } from '../../ui/parts';
import { ConfirmButton } from '../../ui/confirm';
import { PAGE_SIZE, Pager } from '../../ui/pager';
import { CreateKnowledgeBase } from './create';
import { statusClass } from './modes';
import '../builder/builder.css';
import './knowledge.css';

export function KnowledgeBaseList() {
  const { api } = useConsole();
  const [page, setPage] = useState(1);
  const loaded = useLoad(() => must(api.GET('/api/knowledge-bases', { params: { query: { page, size: PAGE_SIZE } } })), [page]);
  const remove = (id: string) => async () => {
    await must(api.DELETE('/api/knowledge-bases/{id}', { params: { path: { id } } }));
    loaded.reload();
  };
  return (
    <Screen title="Knowledge bases">
      <LoadedView loaded={loaded}>
        {(data) => (
          <>
            <Table
              caption="Your knowledge bases"
              rows={data.items}
              rowKey={(kb) => kb.id}
              empty="No knowledge bases yet: create one below, then upload documents to it."
              columns={[
                { header: 'Name', cell: (kb) => <a href={`#/knowledge/${kb.id}`}>{kb.name}</a> },
                { header: 'Documents', cell: (kb) => kb.document_count },
                { header: 'Chunks', cell: (kb) => kb.total_chunks },
                { header: 'Embedding', cell: (kb) => <code>{kb.embedding_model}</code> },
                { header: 'Retrieval', cell: (kb) => kb.retrieval_mode },
                { header: 'Status', cell: (kb) => <span class={`badge ${statusClass(kb.status)}`}>{kb.is_active ? kb.status : 'inactive'}</span> },
                { header: 'Updated', cell: (kb) => <When at={kb.updated_at} /> },
                { header: 'Action', cell: (kb) => <ConfirmButton label="Delete" question={`Delete ${kb.name} and its documents?`} onConfirm={remove(kb.id)} /> },
              ]}
            />
            <Pager label="Knowledge base pages" page={data.page} pages={data.pages} total={data.total} onPage={setPage} />
          </>
        )}
      </LoadedView>
      <CreateKnowledgeBase onCreated={(kb) => navigate(`/knowledge/${kb.id}`)} />
    </Screen>
  );
}
