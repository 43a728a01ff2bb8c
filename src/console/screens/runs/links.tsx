/** Where a run's own page is (DESIGN §17): every screen that names a run links here. */
export const runHref = (runId: string) => `#/runs/${runId}`;

/** A run id as a link to its page, the id shortened for tables (the whole id in its title). */
export function RunLink({ id, full = false }: { id: string; full?: boolean }) {
  return (
    <a href={runHref(id)} title={`Run ${id}`}>
      <code>{full ? id : id.slice(0, 8)}</code>
    </a>
  );
}
