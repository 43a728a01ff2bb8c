import { useEffect, useState } from 'preact/hooks';
import { must } from '../../api';
import { useConsole } from '../../context';
import { navigate } from '../../router';
import { useLoad } from '../../ui/async';
import { ConfirmButton } from '../../ui/confirm';
import { valueOf } from '../../ui/forms';
import { Pager, PAGE_SIZE, PICKER_SIZE } from '../../ui/pager';
import { ErrorNotice, LoadedView, Screen, SelectField, Table, When } from '../../ui/parts';
import { AddMemory } from './add';
import { memories as memoriesCount, namespaceNamer, scoreText, USER_NAMESPACE, type Memory, type Namespace } from './types';
import '../builder/builder.css';
import './memories.css';

/**
 * The user's memories (DESIGN §25), all or one namespace's ('/memories/user', '/memories/{agent id}'):
 * newest first, or with a search closest in meaning first with each score; each deletable, a whole
 * namespace deletable, and a form to add one.
 */
export function MemoriesScreen({ namespace }: { namespace?: string }) {
  const { api } = useConsole();
  const [typed, setTyped] = useState('');
  const [q, setQ] = useState('');
  // The page belongs to one namespace and search: another starts again at page 1.
  const view = `${namespace ?? ''}\n${q}`;
  const [paging, setPaging] = useState({ view, page: 1 });
  const page = paging.view === view ? paging.page : 1;
  const setPage = (next: number) => setPaging({ view, page: next });
  const [deleted, setDeleted] = useState<string>();

  const namespaces = useLoad(() => must(api.GET('/api/memory-namespaces')), []);
  const agents = useLoad(() => must(api.GET('/api/agents', { params: { query: { size: PICKER_SIZE } } })), []);
  // Each answer carries the namespace and search it answers: while the next loads, the rows shown keep their own caption and columns.
  const list = useLoad(
    async () => ({
      shown: await must(api.GET('/api/memories', { params: { query: { page, size: PAGE_SIZE, ...(namespace ? { namespace } : {}), ...(q ? { q } : {}) } } })),
      namespace,
      q,
    }),
    [namespace, q, page],
  );
  const changed = () => {
    list.reload();
    namespaces.reload();
  };
  useEffect(() => setDeleted(undefined), [namespace]);
  // The last memory of a later page deleted: show the page that is now the last.
  useEffect(() => {
    const shown = list.data?.shown;
    if (shown && !list.loading && shown.items.length === 0 && shown.page > 1) setPage(Math.max(1, shown.pages));
  }, [list.data, list.loading]);

  const nameOf = namespaceNamer(namespaces.data?.items, agents.data?.items);
  const counts = namespaces.data?.items ?? [];
  const total = counts.reduce((sum, n) => sum + n.count, 0);
  const countOf = (ns: string) => counts.find((n) => n.namespace === ns)?.count ?? 0;
  const nothingYet = namespaces.data !== undefined && total === 0;

  return (
    <Screen title="Memories">
      <p class="muted">What your agents remember across conversations: each memory belongs to one agent, or to all of your agents (user). You see and control all of it here.</p>
      {nothingYet && <NoMemories />}
      <ErrorNotice error={namespaces.error} />
      <div class="memories-filters">
        <NamespacePicker namespace={namespace} counts={counts} total={total} nameOf={nameOf} />
        <form
          role="search"
          aria-label="Search memories"
          class="memories-search"
          onSubmit={(event) => {
            event.preventDefault();
            setQ(typed.trim());
          }}
        >
          <div class="field grow">
            <label for="memories-q">Search by meaning</label>
            <input id="memories-q" type="search" value={typed} maxLength={2000} placeholder="e.g. favourite colour" onInput={(e) => setTyped(valueOf(e))} />
          </div>
          <div class="actions">
            <button type="submit">Search</button>
            {q && (
              <button
                type="button"
                class="secondary"
                onClick={() => {
                  setTyped('');
                  setQ('');
                }}
              >
                Clear search
              </button>
            )}
          </div>
        </form>
      </div>
      {namespace && countOf(namespace) > 0 && (
        <div class="actions memories-namespace-actions">
          <ConfirmButton
            label="Delete all in this namespace"
            question={`Delete all ${memoriesCount(countOf(namespace))} of ${nameOf(namespace)}? This cannot be undone.`}
            confirmLabel={`Delete ${memoriesCount(countOf(namespace))}`}
            onConfirm={async () => {
              const { deleted: n } = await must(api.DELETE('/api/memories', { params: { query: { namespace } } }));
              setDeleted(`Deleted ${memoriesCount(n)} of ${nameOf(namespace)}.`);
              changed();
            }}
          />
        </div>
      )}
      {deleted && (
        <p class="notice" role="status">
          {deleted}
        </p>
      )}
      {/* With no memories at all, the note above says so and how they come about: no empty list under it. */}
      {!(nothingYet && !q && list.data?.shown.total === 0) && (
        <LoadedView loaded={list}>
          {({ shown: data, namespace, q }) => (
            <>
              {q && <p class="muted small">Closest in meaning to “{q}” first; the score is the cosine similarity (higher is closer).</p>}
              <div class="table-scroll memories-table" aria-busy={list.loading ? 'true' : undefined}>
                <Table<Memory>
                  caption={q ? `Memories closest to “${q}”` : namespace ? `Memories of ${nameOf(namespace)}, newest first` : 'Your memories, newest first'}
                  rows={data.items}
                  rowKey={(m) => m.id}
                  empty={q ? 'No memories to search here.' : namespace ? `${nameOf(namespace)} has no memories.` : 'You have no memories yet.'}
                  columns={[
                    { header: 'Memory', cell: (m) => <MemoryContent memory={m} /> },
                    ...(q ? [{ header: 'Score', cell: (m: Memory) => (m.score === undefined ? '—' : <span data-testid="memory-score">{scoreText(m.score)}</span>) }] : []),
                    // One namespace shown: each row's would say the same.
                    ...(namespace
                      ? []
                      : [
                          {
                            header: 'Namespace',
                            cell: (m: Memory) => (
                              <a href={`#/memories/${m.namespace}`} title={m.namespace}>
                                {nameOf(m.namespace)}
                              </a>
                            ),
                          },
                        ]),
                    { header: 'Created', cell: (m) => <When at={m.created_at} /> },
                    {
                      header: 'Actions',
                      cell: (m) => (
                        <ConfirmButton
                          label="Delete"
                          question="Delete this memory?"
                          confirmLabel="Yes, delete"
                          onConfirm={async () => {
                            await must(api.DELETE('/api/memories/{id}', { params: { path: { id: m.id } } }));
                            setDeleted(undefined);
                            changed();
                          }}
                        />
                      ),
                    },
                  ]}
                />
              </div>
              <Pager page={data.page} pages={data.pages} total={data.total} onPage={setPage} label="Pages of memories" noun={{ one: 'memory', many: 'memories' }} />
            </>
          )}
        </LoadedView>
      )}
      <AddMemory
        key={namespace ?? ''}
        initialNamespace={namespace ?? USER_NAMESPACE}
        agents={agents.data?.items}
        nameOf={nameOf}
        onAdded={() => {
          setDeleted(undefined);
          changed();
        }}
      />
    </Screen>
  );
}

/** All, the user's shared namespace, and each agent's with memories (and the one shown, if it has none). */
function NamespacePicker({ namespace, counts, total, nameOf }: { namespace?: string; counts: Namespace[]; total: number; nameOf: (ns: string) => string }) {
  const agentNamespaces = counts.filter((n) => n.namespace !== USER_NAMESPACE).map((n) => n.namespace);
  if (namespace && namespace !== USER_NAMESPACE && !agentNamespaces.includes(namespace)) agentNamespaces.push(namespace);
  const countOf = (ns: string) => counts.find((n) => n.namespace === ns)?.count ?? 0;
  const options = [
    { value: '', label: `All namespaces (${total})` },
    { value: USER_NAMESPACE, label: `${nameOf(USER_NAMESPACE)} (${countOf(USER_NAMESPACE)})` },
    ...agentNamespaces.map((ns) => ({ value: ns, label: `${nameOf(ns)} (${countOf(ns)})` })),
  ];
  return (
    <div class="memories-namespace">
      <SelectField label="Namespace" options={options} value={namespace ?? ''} onChange={(e) => navigate(valueOf(e) ? `/memories/${valueOf(e)}` : '/memories')} />
    </div>
  );
}

/** A memory's text (a long one folded after its first lines) and its metadata, if any. */
function MemoryContent({ memory }: { memory: Memory }) {
  const long = memory.content.length > 280;
  const metadata = Object.keys(memory.metadata ?? {}).length > 0 ? JSON.stringify(memory.metadata) : undefined;
  return (
    <div class="memory">
      {long ? (
        <details>
          <summary>
            <span class="memory-text">{`${memory.content.slice(0, 279)}…`}</span>
          </summary>
          <p class="memory-text">{memory.content}</p>
        </details>
      ) : (
        <p class="memory-text">{memory.content}</p>
      )}
      {metadata && <code class="memory-metadata muted small">{metadata}</code>}
    </div>
  );
}

/** What memories are and how they come about, when the user has none. */
function NoMemories() {
  return (
    <div class="panel memories-empty" role="note">
      <h2>No memories yet</h2>
      <p>
        A memory is something an agent keeps from one conversation to the next: a preference, a fact about you, a decision. Before each run, the memories closest to the question are given to the agent.
      </p>
      <p>
        Agents get them when you <strong>turn on Memory in an agent</strong> (<a href="#/agents">Agents</a> → an agent → Memory): it can then remember and recall on its own. You can also add one below.
      </p>
    </div>
  );
}
