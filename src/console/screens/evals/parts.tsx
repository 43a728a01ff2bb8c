import { useEffect } from 'preact/hooks';
import { must } from '../../api';
import { useConsole } from '../../context';
import { useLoad, type Loaded } from '../../ui/async';
import { PICKER_SIZE } from '../../ui/pager';
import { Badge } from '../account/parts';
import { EVAL_TONES, POLL_MS, type Eval } from './types';
import './evals.css';

/**
 * Asks again every POLL_MS while `active` says so of what was loaded; stops once nothing is active
 * and when the screen closes (the timer is cleared with the component).
 */
export function usePoll<T>(loaded: Loaded<T>, active: (data: T) => boolean): void {
  useEffect(() => {
    if (loaded.data === undefined || loaded.loading || !active(loaded.data)) return;
    const timer = setTimeout(loaded.reload, POLL_MS);
    return () => clearTimeout(timer);
  }, [loaded.data, loaded.loading]);
}

/** An eval's items done of all as a bar, with the failed ones named. */
export function EvalProgress({ progress }: { progress: Eval['progress'] }) {
  const { done, failed, total } = progress;
  return (
    <div class="eval-progress">
      <progress max={Math.max(total, 1)} value={done} aria-label={`Items done: ${done} of ${total}`} />
      <span class="small">
        <span data-testid="progress-text">
          {done}/{total}
        </span>
        {failed > 0 && <span class="eval-failed"> · {failed} failed</span>}
      </span>
    </div>
  );
}

export function EvalStatusBadge({ status }: { status: Eval['status'] }) {
  return (
    <span data-testid="eval-status">
      <Badge tone={EVAL_TONES[status]}>{status}</Badge>
    </span>
  );
}

/** Names of the user's datasets and agents by id, for lists that carry only ids. */
export function useNames(): { dataset: (id: string) => string | undefined; agent: (id: string) => string | undefined } {
  const { api } = useConsole();
  const datasets = useLoad(() => must(api.GET('/api/datasets', { params: { query: { size: PICKER_SIZE } } })), []);
  const agents = useLoad(() => must(api.GET('/api/agents', { params: { query: { size: PICKER_SIZE } } })), []);
  return {
    dataset: (id) => datasets.data?.items.find((d) => d.id === id)?.name,
    agent: (id) => agents.data?.items.find((a) => a.id === id)?.name,
  };
}
