import { useEffect, useRef, useState } from 'preact/hooks';
import { must } from '../../api';
import { useConsole } from '../../context';
import { useLoad } from '../../ui/async';
import { LoadedView, Table, When } from '../../ui/parts';
import { ConfirmButton } from '../../ui/confirm';
import { bytes } from '../../ui/forms';
import { PAGE_SIZE, Pager } from '../../ui/pager';
import { statusClass, type Document } from './modes';

/** Polling while a document is processing: the first check soon, then each one later, up to a bound. */
const FIRST_POLL_MS = 400;
const POLL_GROWTH = 1.5;
const LAST_POLL_MS = 5_000;
const MAX_POLLS = 40;

/**
 * A knowledge base's documents. While any is processing the page is read again with backoff
 * (bounded; "Check again" after that) and stops when the screen goes; `onSettled` when none is left.
 */
export function Documents({ kbId, uploads, onSettled }: { kbId: string; uploads: number; onSettled: () => void }) {
  const { api } = useConsole();
  const [page, setPage] = useState(1);
  const loaded = useLoad(() => must(api.GET('/api/knowledge-bases/{id}/documents', { params: { path: { id: kbId }, query: { page, size: PAGE_SIZE } } })), [kbId, page, uploads]);
  const polls = useRef(0);
  const wasProcessing = useRef(false);
  const processing = loaded.data?.items.some((doc) => doc.status === 'processing') ?? false;

  useEffect(() => {
    polls.current = 0;
  }, [uploads]);
  useEffect(() => {
    if (!loaded.data) return;
    if (!processing) {
      polls.current = 0;
      if (wasProcessing.current) onSettled();
      wasProcessing.current = false;
      return;
    }
    wasProcessing.current = true;
    if (polls.current >= MAX_POLLS) return;
    const timer = setTimeout(() => {
      polls.current++;
      loaded.reload();
    }, Math.min(LAST_POLL_MS, FIRST_POLL_MS * POLL_GROWTH ** polls.current));
    return () => clearTimeout(timer);
  }, [loaded.data]);

  const remove = (doc: Document) => async () => {
    await must(api.DELETE('/api/knowledge-bases/{id}/documents/{documentId}', { params: { path: { id: kbId, documentId: doc.id } } }));
    loaded.reload();
    onSettled();
  };
  return (
    <section aria-labelledby="documents-title">
      <h2 id="documents-title">Documents</h2>
      <LoadedView loaded={loaded}>
        {(data) => (
          <>
            {processing && polls.current >= MAX_POLLS && (
              <p class="notice">
                Some documents are still being ingested.{' '}
                <button
                  type="button"
                  class="secondary"
                  onClick={() => {
                    polls.current = 0;
                    loaded.reload();
                  }}
                >
                  Check again
                </button>
              </p>
            )}
            <Table
              caption="Documents of this knowledge base"
              rows={data.items}
              rowKey={(doc) => doc.id}
              empty="No documents yet: upload some above."
              columns={[
                { header: 'Name', cell: (doc) => doc.name },
                { header: 'Type', cell: (doc) => <code>{doc.content_type}</code> },
                { header: 'Size', cell: (doc) => bytes(doc.size_bytes) },
                { header: 'Status', cell: (doc) => <DocumentStatus doc={doc} /> },
                { header: 'Chunks', cell: (doc) => doc.chunk_count },
                { header: 'Added', cell: (doc) => <When at={doc.created_at} /> },
                { header: 'Action', cell: (doc) => <ConfirmButton label="Delete" question={`Delete ${doc.name}?`} onConfirm={remove(doc)} /> },
              ]}
            />
            <Pager label="Document pages" page={data.page} pages={data.pages} total={data.total} onPage={setPage} />
          </>
        )}
      </LoadedView>
    </section>
  );
}

function DocumentStatus({ doc }: { doc: Document }) {
  return (
    <span class="doc-status">
      <span class={`badge ${statusClass(doc.status)}`}>{doc.status === 'processing' ? 'processing…' : doc.status}</span>
      {doc.error && <span class="error">{doc.error}</span>}
    </span>
  );
}
