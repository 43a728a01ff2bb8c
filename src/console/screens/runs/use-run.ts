import { useEffect, useState } from 'preact/hooks';
import type { components } from '../../api/schema';
import { must } from '../../api';
import { useConsole } from '../../context';
import { asError } from '../../ui/async';
import type { StreamedEvent } from '../../../shared/event-stream.js';
import { followRun } from '../chat/follow';
import { applyStreamed, newRun, type RunView } from '../chat/transcript';
import { emptyTimeline, withEvent, type Timeline } from './timeline';

export type RunRecord = components['schemas']['Run'];

export interface RunPageState {
  record?: RunRecord;
  view: RunView;
  timeline: Timeline;
  /** The stream is gone (410, or nothing after the run ended): the page shows the record's final state. */
  expired: boolean;
  following: boolean;
  reconnecting: number;
  error?: Error;
}

const initial = (): RunPageState => ({ view: newRun('', 'react', []), timeline: emptyTimeline(), expired: false, following: true, reconnecting: 0 });

/**
 * A run's record and its events (DESIGN §17): the stream replayed from the start and followed live
 * to `done`; when it has expired, the record alone. The record is read again once the run ends
 * (its usage, cost and final status are written then).
 */
export function useRun(id: string): RunPageState {
  const { api, authorizedFetch, session } = useConsole();
  const [state, setState] = useState<RunPageState>(initial);
  useEffect(() => {
    const controller = new AbortController();
    const path = { params: { path: { id } } };
    // An administrator opens any user's run (admin Runs links here): another user's run is 404 on /api/runs.
    let runsPath = '/api/runs';
    const readOwn = () => must(api.GET('/api/runs/{id}', path));
    const readAny = () => must(api.GET('/api/admin/runs/{id}', path));
    const readRecord = (): Promise<RunRecord> => (runsPath === '/api/runs' ? readOwn() : readAny());
    const readFirst = (): Promise<RunRecord> =>
      readOwn().catch((err: unknown) => {
        if (!session.isAdmin || (err as { status?: number }).status !== 404) throw err;
        runsPath = '/api/admin/runs';
        return readAny();
      });
    const onEvent = (streamed: StreamedEvent) =>
      setState((s) => ({ ...s, reconnecting: 0, view: applyStreamed(s.view, streamed), timeline: withEvent(s.timeline, streamed) }));
    const fail = (err: unknown) => !controller.signal.aborted && setState((s) => ({ ...s, following: false, error: asError(err) }));
    setState(initial());
    readFirst()
      .then(async (record) => {
        if (controller.signal.aborted) return;
        setState((s) => ({ ...s, record, view: { ...s.view, question: record.query ?? '', mode: record.mode } }));
        const outcome = await followRun({ fetch: authorizedFetch, runId: id, runsPath, onEvent, onReconnecting: (n) => setState((s) => ({ ...s, reconnecting: n })), signal: controller.signal });
        if (outcome === 'aborted') return;
        const final = await readRecord();
        if (!controller.signal.aborted) setState((s) => ({ ...s, record: final, following: false, reconnecting: 0, expired: outcome === 'ended' && s.timeline.entries.length === 0 }));
      })
      .catch(fail);
    return () => controller.abort();
  }, [id]);
  return state;
}
