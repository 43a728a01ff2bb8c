import type { Citation, EventData, RunEvent, Usage } from '../../../shared/events.js';
import type { FinalRunStatus, RunMode, RunStatus } from '../../../shared/run-statuses.js';
import type { StreamedEvent } from '../../../shared/event-stream.js';
import type { ImageRef } from '../../ui/attachments';

/**
 * The chat's transcript as plain data, and the pure reducer that folds a run's events into it.
 * Kept serialisable (no blob: URLs survive a reload, so previews are dropped when stored).
 */

/** Older entries leave the screen past this many (history messages and runs together). */
export const MAX_ENTRIES = 60;
/** A run keeps its last this many steps (thoughts, tool calls, …); the answer and the plan are always kept. */
export const MAX_RUN_ITEMS = 150;

export interface HistoryMessage {
  kind: 'message';
  key: string;
  role: 'user' | 'assistant' | 'system';
  content: string;
  injected: boolean;
  runId: string | null;
  citations: Citation[];
  images: ImageRef[];
}

export type RunItem =
  | { kind: 'thought'; text: string }
  /** `replaced`: a draft answer that an injected message made the run answer again (shown folded). */
  | { kind: 'text'; text: string; replaced?: boolean }
  | { kind: 'tool'; callId: string; name: string; arguments: Record<string, unknown>; result?: { output: unknown; isError: boolean }; client?: true }
  | { kind: 'approval'; callId: string; name: string; arguments: Record<string, unknown>; decision?: 'approve' | 'reject' | 'decided' }
  | { kind: 'injected'; messageId: string; content: string }
  | { kind: 'compaction'; summarized: number; before: number; after: number }
  /** DESIGN §25: the memories the run was given before it started. */
  | { kind: 'memory'; memories: { id: string; content: string }[] }
  | { kind: 'error'; code: string; message: string };

export interface PlanNodeView {
  id: string;
  task: string;
  dependsOn: string[];
  state: 'pending' | 'started' | 'succeeded' | 'failed';
  output?: string;
}

export interface RunView {
  /** Empty until the API answered the POST. */
  runId: string;
  conversationId: string;
  mode: RunMode;
  question: string;
  images: ImageRef[];
  status: RunStatus;
  items: RunItem[];
  /** Steps dropped from the front to keep the run bounded. */
  droppedItems: number;
  plan?: PlanNodeView[];
  /** The answer's tokens so far (one string: one text node on screen). */
  streamed: string;
  streamedIteration?: number;
  answer?: { content: string; citations: Citation[]; finishReason: string };
  done?: { status: FinalRunStatus; usage: Usage; durationMs: number };
  /** The last event applied: the resume point (`Last-Event-ID`) and the guard against repeats. */
  lastEventId?: string;
}

export type Entry = HistoryMessage | { kind: 'run'; key: string; run: RunView };

export interface Transcript {
  entries: Entry[];
  /** The `before` of the next older page of history; undefined when there is none. */
  olderBefore?: string;
  droppedEntries: number;
}

export const emptyTranscript = (): Transcript => ({ entries: [], droppedEntries: 0 });

/** Stream entry ids are `<ms>-<seq>`: true when `id` comes after `than`. */
export function isAfter(id: string, than: string | undefined): boolean {
  if (!than) return true;
  const [a1 = 0, a2 = 0] = id.split('-').map(Number);
  const [b1 = 0, b2 = 0] = than.split('-').map(Number);
  return a1 !== b1 ? a1 > b1 : a2 > b2;
}

export function newRun(question: string, mode: RunMode, images: ImageRef[]): RunView {
  return { runId: '', conversationId: '', mode, question, images, status: 'queued', items: [], droppedItems: 0, streamed: '' };
}

function withItem(run: RunView, item: RunItem): RunView {
  const items = [...run.items, item];
  const over = Math.max(0, items.length - MAX_RUN_ITEMS);
  return { ...run, items: over ? items.slice(over) : items, droppedItems: run.droppedItems + over };
}

function mapItems(run: RunView, change: (item: RunItem) => RunItem): RunView {
  return { ...run, items: run.items.map(change) };
}

/** Tokens of an earlier iteration (text said before a tool call, or a draft an inject replaced) become a step of their own. */
function flushStreamed(run: RunView, replaced = false): RunView {
  if (!run.streamed) return run;
  return { ...withItem(run, { kind: 'text', text: run.streamed, ...(replaced && { replaced }) }), streamed: '', streamedIteration: undefined };
}

function onToken(run: RunView, data: EventData<'token'>): RunView {
  const base = run.streamedIteration !== undefined && run.streamedIteration !== data.iteration ? flushStreamed(run) : run;
  return { ...base, streamed: base.streamed + data.text, streamedIteration: data.iteration };
}

function onToolResult(run: RunView, data: EventData<'tool_result'>): RunView {
  const result = { output: data.output, isError: data.is_error };
  // DAG nodes number their calls each from call_1: the result goes to the earliest call still without one.
  const index = run.items.findIndex((item) => item.kind === 'tool' && item.callId === data.call_id && !item.result);
  const call = run.items[index];
  if (call?.kind === 'tool') return { ...run, items: run.items.map((item, i) => (i === index ? { ...call, result } : item)) };
  // A rejected call has a result and no call.
  return withItem(run, { kind: 'tool', callId: data.call_id, name: data.name, arguments: {}, result });
}

function onNode(run: RunView, data: EventData<'node'>): RunView {
  const plan = run.plan ?? [];
  const known = plan.some((node) => node.id === data.node_id);
  const nodes = known ? plan : [...plan, { id: data.node_id, task: '', dependsOn: [], state: 'pending' as const }];
  return { ...run, plan: nodes.map((node) => (node.id === data.node_id ? { ...node, state: data.status, output: data.output ?? node.output } : node)) };
}

/** One event applied to its run. */
export function applyEvent(run: RunView, event: RunEvent): RunView {
  switch (event.type) {
    case 'run':
      return { ...run, runId: event.data.run_id, conversationId: event.data.conversation_id, mode: event.data.mode };
    case 'status':
      if (event.data.status !== 'resumed') return { ...run, status: event.data.status };
      // Resumed: every pending call was decided (here or elsewhere).
      return mapItems({ ...run, status: 'running' }, (item) => (item.kind === 'approval' && !item.decision ? { ...item, decision: 'decided' } : item));
    case 'thought':
      return withItem(flushStreamed(run), { kind: 'thought', text: event.data.text });
    case 'token':
      return onToken(run, event.data);
    case 'tool_call':
      return withItem(flushStreamed(run), { kind: 'tool', callId: event.data.call_id, name: event.data.name, arguments: event.data.arguments });
    case 'client_tool_calls':
      // DESIGN §23: calls the API client runs; their results arrive under the same ids once it answers.
      return event.data.tool_calls.reduce((view, call) => withItem(view, { kind: 'tool', callId: call.id, name: call.name, arguments: call.arguments, client: true }), flushStreamed(run));
    case 'approval_required':
      return withItem(flushStreamed(run), { kind: 'approval', callId: event.data.call_id, name: event.data.name, arguments: event.data.arguments });
    case 'tool_result':
      return onToolResult(run, event.data);
    case 'plan':
      return { ...run, plan: event.data.nodes.map((node) => ({ id: node.id, task: node.task, dependsOn: node.depends_on, state: 'pending' })) };
    case 'node':
      return onNode(run, event.data);
    case 'injected':
      // Absorbed before the next iteration: what was streamed so far was a draft, answered again with the message.
      return withItem(flushStreamed(run, true), { kind: 'injected', messageId: event.data.message_id, content: event.data.content });
    case 'compaction':
      return withItem(run, { kind: 'compaction', summarized: event.data.summarized_messages, before: event.data.tokens_before, after: event.data.tokens_after });
    case 'memory':
      return event.data.memories.length === 0 ? run : withItem(run, { kind: 'memory', memories: event.data.memories.map(({ id, content }) => ({ id, content })) });
    case 'answer':
      // The answer replaces the tokens that spelled it: its text is on screen once.
      return { ...run, streamed: '', streamedIteration: undefined, answer: { content: event.data.content, citations: event.data.citations ?? [], finishReason: event.data.finish_reason } };
    case 'error':
      return withItem(run, { kind: 'error', code: event.data.code, message: event.data.message });
    case 'done':
      return { ...flushStreamed(run), status: event.data.status, done: { status: event.data.status, usage: event.data.usage, durationMs: event.data.duration_ms } };
  }
}

/** A streamed event applied once: one at or before the last applied id is a repeat, and ignored. */
export function applyStreamed(run: RunView, streamed: StreamedEvent): RunView {
  if (!isAfter(streamed.id, run.lastEventId)) return run;
  return { ...applyEvent(run, streamed.event), lastEventId: streamed.id };
}

export type TranscriptAction =
  | { type: 'reset'; entries?: Entry[]; olderBefore?: string }
  | { type: 'older'; entries: Entry[]; olderBefore?: string }
  | { type: 'start'; key: string; run: RunView }
  | { type: 'drop'; key: string }
  | { type: 'update'; key: string; change: (run: RunView) => RunView };

function bounded(transcript: Transcript, entries: Entry[]): Transcript {
  const over = Math.max(0, entries.length - MAX_ENTRIES);
  if (!over) return { ...transcript, entries };
  // Entries dropped from the front cannot be paged back in order: older history is then out of reach here.
  return { entries: entries.slice(over), droppedEntries: transcript.droppedEntries + over, olderBefore: undefined };
}

export function transcriptReducer(state: Transcript, action: TranscriptAction): Transcript {
  switch (action.type) {
    case 'reset':
      return bounded({ entries: [], droppedEntries: 0, olderBefore: action.olderBefore }, action.entries ?? []);
    case 'older': {
      const room = Math.max(0, MAX_ENTRIES - state.entries.length);
      const kept = action.entries.slice(Math.max(0, action.entries.length - room));
      const truncated = kept.length < action.entries.length;
      return { ...state, entries: [...kept, ...state.entries], olderBefore: truncated ? kept[0]?.key : action.olderBefore };
    }
    case 'start':
      return bounded(state, [...state.entries, { kind: 'run', key: action.key, run: action.run }]);
    case 'drop':
      return { ...state, entries: state.entries.filter((entry) => entry.key !== action.key) };
    case 'update':
      return {
        ...state,
        entries: state.entries.map((entry) => (entry.kind === 'run' && entry.key === action.key ? { ...entry, run: action.change(entry.run) } : entry)),
      };
  }
}

/** The run as stored for a reload: without this page's blob: URLs. */
export function storableRun(run: RunView): RunView {
  return { ...run, images: run.images.map(({ previewUrl: _, ...image }) => image) };
}
