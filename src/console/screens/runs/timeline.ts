import type { StreamedEvent } from '../../../shared/event-stream.js';
import type { RunEvent } from '../../../shared/events.js';
import { inlineText } from './values';

/** One line of a run's timeline: consecutive tokens of one iteration are one line (the text they spelled). */
export interface TimelineEntry {
  id: string;
  /** Milliseconds since the run's first event (stream ids are `<ms>-<seq>`). */
  at: number;
  type: RunEvent['type'];
  text: string;
  tokens?: number;
}

/** The page keeps at most this many lines; older ones are counted, not shown. */
export const MAX_TIMELINE = 500;

const msOf = (id: string) => Number(id.split('-')[0]) || 0;

const STATUS_LINES = { running: 'Running', resumed: 'Resumed', waiting: 'Waiting for an approval', requires_action: "Waiting for the client's tool outputs" } as const;

function describe(event: RunEvent): string {
  switch (event.type) {
    case 'run':
      return `Queued (${event.data.mode === 'dag' ? 'DAG' : 'ReAct'})`;
    case 'status':
      return STATUS_LINES[event.data.status];
    case 'thought':
      return event.data.text;
    case 'token':
      return event.data.text;
    case 'tool_call':
      return `${event.data.name}(${inlineText(event.data.arguments)})`;
    case 'client_tool_calls':
      return `Client tool calls: ${event.data.tool_calls.map((call) => `${call.name}(${inlineText(call.arguments)})`).join(', ')}`;
    case 'approval_required':
      return `${event.data.name} needs approval`;
    case 'tool_result':
      return `${event.data.name} ${event.data.is_error ? 'failed' : '→'} ${inlineText(event.data.output)}`;
    case 'plan':
      return `Plan of ${event.data.nodes.length} nodes`;
    case 'node':
      return `Node ${event.data.node_id} ${event.data.status}`;
    case 'injected':
      return `Added while running: ${event.data.content}`;
    case 'compaction':
      return `Earlier turns summarised: ${event.data.summarized_messages} messages, ${event.data.tokens_before} → ${event.data.tokens_after} tokens`;
    case 'memory':
      return event.data.memories.length === 0 ? 'No memories recalled' : `Recalled ${event.data.memories.length}: ${event.data.memories.map((m) => inlineText(m.content, 80)).join(' · ')}`;
    case 'answer':
      return inlineText(event.data.content, 160);
    case 'error':
      return `${event.data.code}: ${event.data.message}`;
    case 'done':
      return `${event.data.status} · ${event.data.usage.total_tokens} tokens · ${(event.data.duration_ms / 1000).toFixed(1)} s`;
  }
}

export interface Timeline {
  entries: TimelineEntry[];
  dropped: number;
  startMs?: number;
}

export const emptyTimeline = (): Timeline => ({ entries: [], dropped: 0 });

/** The timeline with one more event. */
export function withEvent(timeline: Timeline, streamed: StreamedEvent): Timeline {
  const startMs = timeline.startMs ?? msOf(streamed.id);
  const at = msOf(streamed.id) - startMs;
  const last = timeline.entries.at(-1);
  const { event } = streamed;
  if (event.type === 'token' && last?.type === 'token') {
    const merged = { ...last, text: last.text + event.data.text, tokens: (last.tokens ?? 1) + 1 };
    return { ...timeline, startMs, entries: [...timeline.entries.slice(0, -1), merged] };
  }
  const entry: TimelineEntry = { id: streamed.id, at, type: event.type, text: describe(event), ...(event.type === 'token' && { tokens: 1 }) };
  const entries = [...timeline.entries, entry];
  const over = Math.max(0, entries.length - MAX_TIMELINE);
  return { startMs, entries: over ? entries.slice(over) : entries, dropped: timeline.dropped + over };
}
