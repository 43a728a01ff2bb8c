/** The Evals screen's two lists, as links (each is a page of its own, reachable by keyboard). */
export function EvalsTabs({ current }: { current: 'evals' | 'datasets' }) {
  return (
    <nav class="evals-tabs row" aria-label="Evals and datasets">
      <a href="#/evals" aria-current={current === 'evals' ? 'page' : undefined}>
        Evals
      </a>
      <a href="#/evals/datasets" aria-current={current === 'datasets' ? 'page' : undefined}>
        Datasets
      </a>
      <a class="button-link" href="#/evals/new">
        New eval
      </a>
    </nav>
  );
}
