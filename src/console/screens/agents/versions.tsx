import { useState } from 'preact/hooks';
import type { components } from '../../api/schema';
import { must } from '../../api';
import { useConsole } from '../../context';
import { useAction, useLoad } from '../../ui/async';
import { ErrorNotice, LoadedView, Table, When } from '../../ui/parts';
import { PAGE_SIZE, Pager } from '../../ui/pager';
import type { Agent } from './draft';
import { modelLabel } from './names';

type Version = components['schemas']['AgentVersion'];

/** What a version changed from the one before it (when that one is on the same page). */
function changedSince(version: Version, listed: Version[]) {
  if (version.version === 1) return <span class="muted">created</span>;
  const before = listed.find((v) => v.version === version.version - 1);
  if (!before) return <span class="muted">—</span>;
  const fields = (Object.keys(version) as (keyof Version)[]).filter((field) => field !== 'version' && field !== 'created_at' && JSON.stringify(version[field]) !== JSON.stringify(before[field]));
  return fields.length ? fields.join(', ') : <span class="muted">nothing (a restore of the same settings)</span>;
}

/** An agent's versions, newest first; any but the current one can be restored (as the next version). */
export function AgentVersions({ id, currentVersion, onRestored }: { id: string; currentVersion: number; onRestored: (agent: Agent, from: number) => void }) {
  const { api } = useConsole();
  const [page, setPage] = useState(1);
  const loaded = useLoad(() => must(api.GET('/api/agents/{id}/versions', { params: { path: { id }, query: { page, size: PAGE_SIZE } } })), [id, page, currentVersion]);
  const restore = useAction(async (n: number) => onRestored(await must(api.POST('/api/agents/{id}/versions/{n}/restore', { params: { path: { id, n } } })), n));
  return (
    <section aria-labelledby="versions-title">
      <h2 id="versions-title">Versions</h2>
      <ErrorNotice error={restore.error} />
      <LoadedView loaded={loaded}>
        {(data) => (
          <>
            <Table
              caption="Versions of this agent, newest first"
              rows={data.items}
              rowKey={(version) => String(version.version)}
              empty="No versions recorded."
              columns={[
                { header: 'Version', cell: (v) => (v.version === currentVersion ? <>{v.version} <span class="badge ok">current</span></> : v.version) },
                { header: 'Made', cell: (v) => <When at={v.created_at} /> },
                { header: 'Changed', cell: (v) => changedSince(v, data.items) },
                { header: 'Model', cell: (v) => (v.model ? <code>{v.model}</code> : <span class="muted">{modelLabel(null)}</span>) },
                { header: 'Instructions', cell: (v) => <span class="clip">{v.instructions || <span class="muted">none</span>}</span> },
                {
                  header: 'Action',
                  cell: (v) =>
                    v.version === currentVersion ? null : (
                      <button type="button" class="secondary" disabled={restore.busy} aria-label={`Restore version ${v.version}`} onClick={() => void restore.run(v.version)}>
                        Restore
                      </button>
                    ),
                },
              ]}
            />
            <Pager label="Version pages" page={data.page} pages={data.pages} total={data.total} onPage={setPage} />
          </>
        )}
      </LoadedView>
    </section>
  );
}
