/** What a page envelope counts, named: `{ one: 'key', many: 'keys' }` → "3 keys". */
export interface Noun {
  one: string;
  many: string;
}

/**
 * Previous/next through a paged list (the API's {page, pages, total}). With a `noun`, the count is
 * shown even when everything fits on one page; without, nothing is.
 */
export function Pager({ label, page, pages, total, onPage, noun }: { label: string; page: number; pages: number; total: number; onPage: (page: number) => void; noun?: Noun }) {
  const counted = noun ? `${total.toLocaleString()} ${total === 1 ? noun.one : noun.many}` : total.toLocaleString();
  if (pages <= 1) return noun ? <p class="muted pager-total">{counted}</p> : null;
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" class="secondary" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        Previous
      </button>
      <span>
        Page {page} of {pages} ({counted})
      </span>
      <button type="button" class="secondary" disabled={page >= pages} onClick={() => onPage(page + 1)}>
        Next
      </button>
    </nav>
  );
}

/** How many rows a list shows per page. */
export const PAGE_SIZE = 20;
/** Enough of a user's agents, knowledge bases or connectors to fill a picker (the API's largest page). */
export const PICKER_SIZE = 100;
