import { readEvents, type StreamedEvent } from '../../../shared/event-stream.js';
import { apiFailure, ApiError } from '../../session';
import { FINAL_RUN_STATUSES } from '../../../shared/run-statuses.js';
import { isAfter } from './transcript';

type Fetch = (request: Request) => Promise<Response>;

/** Reconnection waits grow to this, and the stream is given up after this many failures in a row. */
const MAX_BACKOFF_MS = 5_000;
const MAX_ATTEMPTS = 30;

/** How a run uses the agent's knowledge (DESIGN §14): auto, grounded (answers only from it, or says it cannot), off. */
export type DocMode = 'auto' | 'grounded' | 'off';

export interface RunBody {
  q: string;
  agent_id: string | null;
  conversation_id: string | null;
  doc_mode?: DocMode;
  image_ids?: string[];
}

/** POST /api/react or /api/dag: the response streams the run's events (its headers name the run). */
export async function startRun(fetch: Fetch, mode: 'react' | 'dag', body: RunBody, signal: AbortSignal): Promise<Response> {
  const res = await fetch(new Request(`/api/${mode}`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify(body), signal }));
  if (!res.ok) throw await apiFailure(res);
  return res;
}

export interface FollowOptions {
  fetch: Fetch;
  runId: string;
  /** Where the run is read: `/api/runs` (the caller's own), or `/api/admin/runs` (an administrator reading any user's). */
  runsPath?: string;
  /** The last event already shown: the stream resumes after it (`Last-Event-ID`). */
  lastEventId?: string;
  /** The POST's own response, read first; later connections are GET /api/runs/{id}/events. */
  first?: Response;
  onEvent: (streamed: StreamedEvent) => void;
  onReconnecting: (attempt: number) => void;
  signal: AbortSignal;
}

/**
 * Follows a run to its `done`, across dropped connections: each reconnection resumes after the
 * last event seen, and an event at or before it is never handed on twice.
 * 'done': the done event came; 'ended': the stream has no more to give (the run ended and its
 * events expired, or ended before the resume point), read the run record; 'aborted'.
 */
export async function followRun(options: FollowOptions): Promise<'done' | 'ended' | 'aborted'> {
  const { fetch, onEvent, signal } = options;
  const runPath = `${options.runsPath ?? '/api/runs'}/${encodeURIComponent(options.runId)}`;
  let last = options.lastEventId;
  let response = options.first;
  let finished = false;
  let failures = 0;
  const see = (streamed: StreamedEvent) => {
    if (!isAfter(streamed.id, last)) return;
    last = streamed.id;
    failures = 0;
    if (streamed.event.type === 'done') finished = true;
    onEvent(streamed);
  };
  while (!signal.aborted) {
    const before = last;
    try {
      response ??= await openEvents(fetch, runPath, last, signal);
      if (response.status === 410) return 'ended';
      if (!response.ok) throw await apiFailure(response);
      await readEvents(response, see, signal);
    } catch (err) {
      if (signal.aborted) return 'aborted';
      if (err instanceof ApiError && err.status < 500 && err.status !== 429) throw err;
    }
    response = undefined;
    if (finished) return 'done';
    if (signal.aborted) return 'aborted';
    // A clean close with nothing new after the resume point: the run ended before it (DESIGN §5).
    if (before === last && (await runIsFinal(fetch, runPath, signal))) return 'ended';
    failures += 1;
    if (failures > MAX_ATTEMPTS) throw new Error('The connection to the run was lost; reload to try again.');
    options.onReconnecting(failures);
    await pause(Math.min(MAX_BACKOFF_MS, 500 * failures), signal);
  }
  return 'aborted';
}

function openEvents(fetch: Fetch, runPath: string, last: string | undefined, signal: AbortSignal): Promise<Response> {
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  if (last) headers['last-event-id'] = last;
  return fetch(new Request(`${runPath}/events`, { headers, signal }));
}

async function runIsFinal(fetch: Fetch, runPath: string, signal: AbortSignal): Promise<boolean> {
  const res = await fetch(new Request(runPath, { signal })).catch(() => undefined);
  if (!res?.ok) return false;
  const run = (await res.json()) as { status: string };
  return (FINAL_RUN_STATUSES as readonly string[]).includes(run.status);
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
}
