import { useEffect, useReducer, useRef, useState } from 'preact/hooks';
import type { components } from '../../api/schema';
import { must } from '../../api';
import { useConsole } from '../../context';
import { navigate } from '../../router';
import { apiFailure } from '../../session';
import { asError } from '../../ui/async';
import type { StreamedEvent } from '../../../shared/event-stream.js';
import type { RunMode } from '../../../shared/run-statuses.js';
import type { DocMode } from './follow';
import { emptyUsage } from '../../../shared/events.js';
import { followRun, startRun } from './follow';
import { clearInFlight, loadInFlight, saveInFlight } from './storage';
import { applyStreamed, emptyTranscript, MAX_ENTRIES, newRun, transcriptReducer, type Entry, type RunView } from './transcript';
import type { ImageRef } from '../../ui/attachments';

type Message = components['schemas']['Message'];
type RunRecord = components['schemas']['Run'];
type FileRecord = components['schemas']['File'];

const HISTORY_PAGE = 50;

function toEntry(message: Message): Entry {
  return {
    kind: 'message',
    key: message.id,
    role: message.role,
    content: message.content,
    injected: message.injected,
    runId: message.run_id,
    citations: message.citations,
    images: message.attachments.map((a) => ({ id: a.id, filename: a.filename, deleted: a.deleted })),
  };
}

/** A run whose events are gone (expired, or it ended before the resume point) is finished from its record. */
function settledFrom(record: RunRecord): (run: RunView) => RunView {
  return (run) => {
    if (run.done || !['succeeded', 'failed', 'cancelled', 'interrupted'].includes(record.status)) return run;
    const usage = { ...emptyUsage(), ...(record.usage ?? {}) };
    const durationMs = record.started_at && record.finished_at ? Date.parse(record.finished_at) - Date.parse(record.started_at) : 0;
    const answer = run.answer ?? (record.answer !== null ? { content: record.answer, citations: [], finishReason: record.finish_reason ?? 'stop' } : undefined);
    return { ...run, streamed: answer ? '' : run.streamed, answer, status: record.status, done: { status: record.status as NonNullable<RunView['done']>['status'], usage, durationMs } };
  };
}

/**
 * The chat's state and actions: the conversation's history, the runs started here (streamed,
 * resumed after a drop or a reload from sessionStorage), and what a person does to a run.
 */
export function useChat(routeConversationId: string | undefined, routeAgentId?: string) {
  const { api, authorizedFetch } = useConsole();
  const [transcript, dispatch] = useReducer(transcriptReducer, undefined, emptyTranscript);
  const [conversation, setConversation] = useState<{ id: string; title: string }>();
  const [agentId, setAgentId] = useState(routeAgentId ?? '');
  const [mode, setMode] = useState<RunMode>('react');
  const [docMode, setDocMode] = useState<DocMode>('auto');
  const [activeKey, setActiveKey] = useState<string>();
  const [reconnecting, setReconnecting] = useState(0);
  const [error, setError] = useState<Error>();
  const [loadingHistory, setLoadingHistory] = useState(false);
  const shown = useRef<string | undefined>(undefined);
  const follower = useRef<AbortController | undefined>(undefined);
  const previews = useRef<string[]>([]);

  useEffect(
    () => () => {
      follower.current?.abort();
      previews.current.forEach((url) => URL.revokeObjectURL(url));
    },
    [],
  );

  // Another conversation (or a new one): stop following here; the run itself goes on.
  useEffect(() => {
    // A new conversation opened for an agent ("Open the chat" on it) starts with that agent chosen.
    if (routeConversationId === undefined && routeAgentId) setAgentId(routeAgentId);
    if (routeConversationId !== undefined && routeConversationId === shown.current) return;
    follower.current?.abort();
    shown.current = routeConversationId;
    setActiveKey(undefined);
    setReconnecting(0);
    setError(undefined);
    setConversation(undefined);
    dispatch({ type: 'reset' });
    if (routeConversationId) void openConversation(routeConversationId);
  }, [routeConversationId, routeAgentId]);

  const activeEntry = transcript.entries.find((entry) => entry.kind === 'run' && entry.key === activeKey);
  const activeRun = activeEntry?.kind === 'run' ? activeEntry.run : undefined;

  // What the active run showed so far is kept for a reload, with its last event id (one write: they agree).
  useEffect(() => {
    if (!activeKey || !activeRun?.runId) return;
    if (activeRun.done) clearInFlight(activeRun.runId);
    else saveInFlight({ key: activeKey, run: activeRun });
  }, [activeRun]);

  async function openConversation(id: string) {
    setLoadingHistory(true);
    try {
      const [record, page] = await Promise.all([
        must(api.GET('/api/conversations/{id}', { params: { path: { id } } })),
        must(api.GET('/api/conversations/{id}/messages', { params: { path: { id }, query: { limit: HISTORY_PAGE } } })),
      ]);
      if (shown.current !== id) return;
      const inFlight = loadInFlight();
      const resumed = inFlight?.run.conversationId === id && !inFlight.run.done ? inFlight : undefined;
      setConversation({ id, title: record.title });
      setAgentId(record.agent_id ?? '');
      // The run being resumed shows its own question, injects and answer.
      const history = [...page.items].reverse().filter((message) => !resumed || message.run_id !== resumed.run.runId);
      dispatch({ type: 'reset', entries: history.map(toEntry), olderBefore: page.next_before ?? undefined });
      if (resumed) {
        dispatch({ type: 'start', key: resumed.key, run: resumed.run });
        setMode(resumed.run.mode);
        void follow(resumed.key, resumed.run.runId, resumed.run.lastEventId, new AbortController());
      }
    } catch (err) {
      if (shown.current === id) setError(asError(err));
    } finally {
      setLoadingHistory(false);
    }
  }

  async function loadOlder() {
    const id = shown.current;
    const before = transcript.olderBefore;
    const room = MAX_ENTRIES - transcript.entries.length;
    if (!id || !before || room <= 0) return;
    const page = await must(api.GET('/api/conversations/{id}/messages', { params: { path: { id }, query: { before, limit: Math.min(HISTORY_PAGE, room) } } }));
    if (shown.current === id) dispatch({ type: 'older', entries: [...page.items].reverse().map(toEntry), olderBefore: page.next_before ?? undefined });
  }

  async function follow(key: string, runId: string, lastEventId: string | undefined, controller: AbortController, first?: Response) {
    follower.current = controller;
    setActiveKey(key);
    const onEvent = (streamed: StreamedEvent) => {
      setReconnecting(0);
      dispatch({ type: 'update', key, change: (run) => applyStreamed(run, streamed) });
    };
    try {
      const outcome = await followRun({ fetch: authorizedFetch, runId, lastEventId, first, onEvent, onReconnecting: setReconnecting, signal: controller.signal });
      if (outcome === 'aborted') return;
      if (outcome === 'ended') {
        const record = await must(api.GET('/api/runs/{id}', { params: { path: { id: runId } } }));
        dispatch({ type: 'update', key, change: settledFrom(record) });
      }
      clearInFlight(runId);
      if (follower.current === controller) setActiveKey(undefined);
    } catch (err) {
      if (!controller.signal.aborted) setError(asError(err));
    } finally {
      if (follower.current === controller) setReconnecting(0);
    }
  }

  async function upload(file: File): Promise<FileRecord> {
    const form = new FormData();
    form.append('file', file, file.name);
    const res = await authorizedFetch(new Request('/api/files', { method: 'POST', body: form }));
    if (!res.ok) throw await apiFailure(res);
    return (await res.json()) as FileRecord;
  }

  async function send({ q, files }: { q: string; files: File[] }): Promise<boolean> {
    setError(undefined);
    const key = `run-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
    const images: ImageRef[] = files.map((file) => ({ filename: file.name, previewUrl: URL.createObjectURL(file) }));
    previews.current.push(...images.flatMap((image) => (image.previewUrl ? [image.previewUrl] : [])));
    dispatch({ type: 'start', key, run: newRun(q, mode, images) });
    const controller = new AbortController();
    try {
      const uploaded = await Promise.all(files.map(upload));
      const withIds = images.map((image, i) => ({ ...image, id: uploaded[i]?.id }));
      dispatch({ type: 'update', key, change: (run) => ({ ...run, images: withIds }) });
      follower.current?.abort();
      follower.current = controller;
      const body = { q, agent_id: agentId || null, conversation_id: shown.current ?? null, doc_mode: docMode, ...(uploaded.length ? { image_ids: uploaded.map((file) => file.id) } : {}) };
      const res = await startRun(authorizedFetch, mode, body, controller.signal);
      const runId = res.headers.get('x-run-id') ?? '';
      const conversationId = res.headers.get('x-conversation-id') ?? '';
      dispatch({ type: 'update', key, change: (run) => ({ ...run, runId, conversationId }) });
      if (conversationId && shown.current !== conversationId) {
        shown.current = conversationId;
        setConversation({ id: conversationId, title: q.length > 80 ? `${q.slice(0, 79)}…` : q });
        navigate(`/chat/${conversationId}`);
      }
      void follow(key, runId, undefined, controller, res);
      return true;
    } catch (err) {
      dispatch({ type: 'drop', key });
      setError(asError(err));
      return false;
    }
  }

  const inject = async (content: string) => {
    if (!activeRun?.conversationId) throw new Error('The run has not started yet.');
    await must(api.POST('/api/chat/inject', { body: { conversation_id: activeRun.conversationId, content } }));
  };

  const cancel = async () => {
    if (!activeRun?.runId) throw new Error('The run has not started yet.');
    await must(api.POST('/api/runs/{id}/cancel', { params: { path: { id: activeRun.runId } } }));
  };

  const decide = async (runId: string, callId: string, decision: 'approve' | 'reject') => {
    await must(api.POST('/api/runs/{id}/approvals', { params: { path: { id: runId } }, body: { call_id: callId, decision } }));
    const key = transcript.entries.find((entry) => entry.kind === 'run' && entry.run.runId === runId)?.key;
    if (!key) return;
    // The stream's `resumed` may have marked the call 'decided' before this answer came back: this page's own decision says more.
    const undecided = (item: RunView['items'][number]): item is Extract<RunView['items'][number], { kind: 'approval' }> => item.kind === 'approval' && item.callId === callId && (!item.decision || item.decision === 'decided');
    dispatch({ type: 'update', key, change: (run) => ({ ...run, items: run.items.map((item) => (undecided(item) ? { ...item, decision } : item)) }) });
  };

  return { transcript, conversation, agentId, setAgentId, mode, setMode, docMode, setDocMode, activeRun, reconnecting, error, loadingHistory, send, inject, cancel, decide, loadOlder };
}
