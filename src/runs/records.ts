import * as v from 'valibot';
import { eventSchemas } from '../shared/events.js';
import type { MediaResponse } from '../auth/route.js';

/** One event of a run's stream: `id:` (a Redis stream id), `event:` (its type) and `data:` (one line of JSON). */
export const RunEventSchema = v.union(Object.entries(eventSchemas).map(([type, data]) => v.strictObject({ event: v.literal(type), id: v.string(), data })));

/** A run streamed as server-sent events (DESIGN §5). */
export const runEventStream: MediaResponse = {
  mediaType: 'text/event-stream',
  description: [
    'The run as server-sent events: each event is `id: <stream entry id>`, `event: <type>`, `data: <one-line JSON>`;',
    '`run` always comes first and `done` always last; a comment line `: ping` every 15 s. Headers `X-Run-Id` and `X-Conversation-Id` name the run.',
    'Resume after a dropped connection with `GET /api/runs/{id}/events` and `Last-Event-ID`.',
    '',
    '| event | data |',
    '|---|---|',
    '| `run` | `{run_id, conversation_id, agent_id, mode, status: "queued"}` (always first) |',
    '| `status` | `{status: "running" \\| "resumed" \\| "waiting" \\| "requires_action"}` |',
    '| `thought` | `{iteration, text}` |',
    '| `token` | `{iteration, text}` (incremental answer text) |',
    '| `tool_call` | `{iteration, call_id, name, arguments}` |',
    "| `client_tool_calls` | `{iteration, tool_calls: [{id, name, arguments}]}`: calls of the run's `client_tools` for the client to run (DESIGN §23), before `status: requires_action`; answer with POST /api/runs/{id}/tool-outputs |",
    '| `approval_required` | `{iteration, call_id, name, arguments}` (decide with POST /api/runs/{id}/approvals) |',
    '| `tool_result` | `{iteration, call_id, name, output, is_error}` |',
    '| `plan` | `{nodes: [{id, task, depends_on}]}` (DAG) |',
    '| `node` | `{node_id, status: "started" \\| "succeeded" \\| "failed", output?}` (DAG) |',
    '| `injected` | `{message_id, content, iteration}` |',
    "| `compaction` | `{summarized_messages, tokens_before, tokens_after}`: the oldest turns were folded into the conversation's `summary` to fit the agent's `context_window` (DESIGN §20) |",
    "| `memory` | `{ids, memories: [{id, namespace, content, score}]}`: the user's memories the run was given before its first model call, closest first (agents with `memory: true`, DESIGN §25; an empty list when none) |",
    '| `answer` | `{message_id, content, finish_reason: "stop" \\| "length" \\| "content_filter", citations: [{chunk_id, document_id, document_name, page}]}` |',
    '| `error` | `{code, message, retryable}` |',
    '| `done` | `{status: "succeeded" \\| "failed" \\| "cancelled", usage, duration_ms}` (always last) |',
  ].join('\n'),
  schema: RunEventSchema,
};

export const runStreamHeaders = { 'X-Run-Id': 'The run being streamed', 'X-Conversation-Id': "The run's conversation" };
