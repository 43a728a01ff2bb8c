import { storableRun, type RunView } from './transcript';

const KEY = 'agent-platform.console.chat.in-flight';

/** The run this tab is following, kept across a reload: its ids, its last event id and what it showed so far. */
export interface InFlight {
  key: string;
  run: RunView;
}

export function saveInFlight(inFlight: InFlight): void {
  try {
    sessionStorage.setItem(KEY, JSON.stringify({ key: inFlight.key, run: storableRun(inFlight.run) }));
  } catch {
    // A full or disabled storage costs only the resume after a reload.
  }
}

export function loadInFlight(): InFlight | undefined {
  try {
    const saved = JSON.parse(sessionStorage.getItem(KEY) ?? 'null') as InFlight | null;
    return saved?.run?.runId && saved.run.conversationId ? saved : undefined;
  } catch {
    return undefined;
  }
}

export function clearInFlight(runId?: string): void {
  if (runId && loadInFlight()?.run.runId !== runId) return;
  sessionStorage.removeItem(KEY);
}
