import * as v from 'valibot';
import { FINAL_RUN_STATUSES, RUN_MODES } from './run-statuses.js';

/** SSE event types (DESIGN §5), shared by the workers that publish them and the web tier that relays them. */

const iteration = v.pipe(v.number(), v.integer(), v.minValue(0));
/** A run's tokens; `estimated` when a model call was cut off before its provider reported usage (DESIGN §21: the prompt and what it streamed, counted). */
const usage = v.object({ prompt_tokens: v.number(), completion_tokens: v.number(), reasoning_tokens: v.number(), total_tokens: v.number(), estimated: v.optional(v.boolean()) });
export type Usage = v.InferOutput<typeof usage>;
export const FINISH_REASONS = ['stop', 'length', 'content_filter'] as const;
export type FinishReason = (typeof FINISH_REASONS)[number];
export const emptyUsage = (): Usage => ({ prompt_tokens: 0, completion_tokens: 0, reasoning_tokens: 0, total_tokens: 0 });

/** A passage an answer used (DESIGN §14): on the `answer` event and the stored assistant message. */
export const citationSchema = v.object({ chunk_id: v.string(), document_id: v.string(), document_name: v.string(), page: v.nullable(v.number()) });
export type Citation = v.InferOutput<typeof citationSchema>;

export const eventSchemas = {
  run: v.object({
    run_id: v.string(),
    conversation_id: v.string(),
    agent_id: v.nullable(v.string()),
    mode: v.picklist(RUN_MODES),
    status: v.literal('queued'),
    /** The run's OpenTelemetry trace (DESIGN §18); null when tracing is off. Streams written before it existed lack it. */
    trace_id: v.optional(v.nullable(v.string())),
  }),
  status: v.object({ status: v.picklist(['running', 'resumed', 'waiting', 'requires_action']) }),
  thought: v.object({ iteration, text: v.string() }),
  token: v.object({ iteration, text: v.string() }),
  tool_call: v.object({ iteration, call_id: v.string(), name: v.string(), arguments: v.record(v.string(), v.unknown()) }),
  approval_required: v.object({ iteration, call_id: v.string(), name: v.string(), arguments: v.record(v.string(), v.unknown()) }),
  /** DESIGN §23: calls the client must run, published before `status: requires_action`; `id` is the one the client answers by. */
  client_tool_calls: v.object({ iteration, tool_calls: v.array(v.object({ id: v.string(), name: v.string(), arguments: v.record(v.string(), v.unknown()) })) }),
  tool_result: v.object({ iteration, call_id: v.string(), name: v.string(), output: v.unknown(), is_error: v.boolean() }),
  plan: v.object({ nodes: v.array(v.object({ id: v.string(), task: v.string(), depends_on: v.array(v.string()) })) }),
  node: v.object({ node_id: v.string(), status: v.picklist(['started', 'succeeded', 'failed']), output: v.optional(v.string()) }),
  injected: v.object({ message_id: v.string(), content: v.string(), iteration }),
  /** DESIGN §20: the oldest turns were folded into the conversation's summary before the run's first model call. */
  compaction: v.object({ summarized_messages: v.pipe(v.number(), v.integer(), v.minValue(1)), tokens_before: v.number(), tokens_after: v.number() }),
  /** DESIGN §25: the memories recalled before the run's first model call, closest first (none: an empty list). */
  memory: v.object({ ids: v.array(v.string()), memories: v.array(v.object({ id: v.string(), namespace: v.string(), content: v.string(), score: v.number() })) }),
  /** `output` (DESIGN §23): the content parsed, valid against the run's output schema; absent for prose runs. */
  answer: v.object({ message_id: v.string(), content: v.string(), finish_reason: v.picklist(FINISH_REASONS), citations: v.optional(v.array(citationSchema)), output: v.optional(v.unknown()) }),
  error: v.object({ code: v.string(), message: v.string(), retryable: v.boolean() }),
  done: v.object({ status: v.picklist(FINAL_RUN_STATUSES), usage, duration_ms: v.number() }),
};

export type EventType = keyof typeof eventSchemas;
export type EventData<T extends EventType> = v.InferOutput<(typeof eventSchemas)[T]>;
export type RunEvent = { [T in EventType]: { type: T; data: EventData<T> } }[EventType];
export const EVENT_TYPES = Object.keys(eventSchemas) as EventType[];

/** A stream entry as stored: its id plus the type and JSON data fields. */
export interface StoredEvent {
  id: string;
  type: EventType;
  /** Already-serialised one-line JSON, relayed as is. */
  data: string;
}

export function isEventType(type: string): type is EventType {
  return Object.hasOwn(eventSchemas, type);
}

/** Parses a relayed event back into the typed union (clients, tests). */
export function parseEvent(type: string, data: string): RunEvent {
  if (!isEventType(type)) throw new Error(`unknown event type ${type}`);
  return { type, data: v.parse(eventSchemas[type], JSON.parse(data)) } as RunEvent;
}
