import * as v from 'valibot';
import { eventSchemas, FINISH_REASONS } from '../shared/events.js';
import { FINAL_RUN_STATUSES, RUN_STATUSES } from '../shared/run-statuses.js';
import { SCOPES } from '../auth/scopes.js';
import { API_FORMATS, GatewayToolSchema, REASONING_EFFORTS } from '../shared/model-settings.js';
import { TOOL_NAMES } from '../shared/tools.js';
import { CHUNK_STRATEGIES, KNOWLEDGE_BASE_STATUSES, RETRIEVAL_MODES } from '../db/knowledge-models.js';
import { WEBHOOK_EVENTS } from '../db/webhook-models.js';
import type { MediaResponse } from '../auth/route.js';
import { BUDGET_PERIODS } from '../shared/budget-terms.js';
import { SKIP_REASONS } from '../db/schedule-models.js';

/**
 * The records the API answers with, as valibot schemas (DESIGN §12). They document the responses
 * in /openapi.json and the contract test holds every response of the test suite to them; they are
 * never run while serving. Objects are strict, so a field the code adds without documenting fails.
 */

const instant = v.pipe(v.string(), v.isoTimestamp());
const uuid = v.pipe(v.string(), v.uuid());
const count = v.pipe(v.number(), v.integer(), v.minValue(0));
const described = <S extends v.GenericSchema>(schema: S, text: string) => v.pipe(schema, v.description(text));

/** The spec's page envelope around `item`. */
export const pageOf = <S extends v.GenericSchema>(item: S) =>
  v.strictObject({ items: v.array(item), total: count, page: v.pipe(v.number(), v.integer(), v.minValue(1)), size: v.pipe(v.number(), v.integer(), v.minValue(1)), pages: count });

// Errors (DESIGN §4)

export const ErrorBody = v.strictObject({ error: v.string(), message: v.string() });
const errorOf = <C extends string>(codes: readonly [C, ...C[]]) => v.strictObject({ error: v.picklist(codes), message: v.string() });
export const AuthErrorBody = errorOf(['unauthorized', 'invalid_token', 'token_expired']);
export const ValidationErrorBody = v.strictObject({
  detail: v.array(
    v.strictObject({
      loc: v.array(v.union([v.string(), v.number()])),
      msg: v.string(),
      type: v.string(),
      input: v.optional(v.unknown()),
      ctx: v.optional(v.record(v.string(), v.unknown())),
    }),
  ),
});
export const InternalErrorBody = v.strictObject({ error: v.literal('internal_error'), message: v.string(), request_id: v.nullable(v.string()) });
/** Token counts by name (prompt_tokens, completion_tokens, reasoning_tokens, total_tokens). */
/** Token counts by kind, and `estimated: true` when a model call was cut off before its provider reported usage (DESIGN §21). */
const tokenCounts = v.record(v.string(), v.union([v.number(), v.boolean()]));
const runStatus = v.picklist(RUN_STATUSES);
/**
 * 410 from GET /api/runs/{id}/events: the finished run's stream has expired; its outcome comes with
 * the error. The outcome fields are optional until every web process sends them (they arrive with
 * the stream-TTL change), then they are always there.
 */
export const GoneBody = v.strictObject({
  error: v.literal('gone'),
  message: v.string(),
  /** A finished run's outcome, so a late re-join still learns it (DESIGN §13). */
  status: v.picklist(FINAL_RUN_STATUSES),
  answer: v.nullable(v.string()),
  usage: v.nullable(tokenCounts),
});

/** The error body of each status. */
export const errorBodies: Record<number, v.GenericSchema> = {
  400: errorOf(['bad_request']),
  401: AuthErrorBody,
  403: errorOf(['forbidden']),
  404: errorOf(['not_found']),
  405: errorOf(['method_not_allowed']),
  409: errorOf(['no_active_execution', 'conversation_busy', 'last_admin', 'endpoint_disabled', 'approval_not_pending', 'schedule_limit', 'not_requires_action', 'tool_output_not_pending']),
  410: GoneBody,
  413: errorOf(['payload_too_large']),
  415: errorOf(['unsupported_media_type']),
  422: ValidationErrorBody,
  429: errorOf(['rate_limited', 'insufficient_quota']),
  500: InternalErrorBody,
  // The gateway's verdict on a call the request needed, e.g. model_not_found (DESIGN §6).
  502: v.strictObject({ error: v.string(), message: v.string() }),
  503: v.strictObject({ error: v.literal('unavailable'), message: v.string(), checks: v.optional(v.record(v.string(), v.string())) }),
};

// Identity

/** DESIGN §18: the limits a key or a user carries, and its budget's use in the current period. */
const limitRecords = {
  rate_limit_rpm: described(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100_000))), 'Requests per minute; null: none of its own'),
  token_budget: described(
    v.nullable(v.strictObject({ limit: v.pipe(v.number(), v.integer(), v.minValue(1)), period: v.picklist(BUDGET_PERIODS) })),
    'Model tokens per UTC calendar day or month; null: none of its own',
  ),
  token_usage: described(
    v.nullable(v.strictObject({ used: count, period_start: instant, resets_at: instant })),
    "The budget's current period: tokens used so far, when it began and when it resets; null without a budget",
  ),
};

export const PublicUser = v.strictObject({ id: uuid, email: v.string(), name: v.string(), role: v.picklist(['admin', 'member', 'restricted']), created_at: instant });
export const AdminUser = v.strictObject({ ...PublicUser.entries, is_active: v.boolean(), ...limitRecords, updated_at: instant });
export const TokenPair = v.strictObject({
  access_token: described(v.string(), 'A JWT, valid for expires_in seconds'),
  refresh_token: described(v.string(), 'Single use: exchange it at POST /api/auth/refresh'),
  token_type: v.literal('bearer'),
  expires_in: count,
  user: PublicUser,
});
/** The spec's UserApiKeyInfo. */
export const ApiKeyInfo = v.strictObject({
  id: uuid,
  name: v.string(),
  key_prefix: v.string(),
  scopes: described(v.nullable(v.string()), `Space-separated scopes (${SCOPES.join(', ')}); null: full access`),
  is_active: v.boolean(),
  expires_at: v.nullable(instant),
  last_used_at: v.nullable(instant),
  total_requests: count,
  ...limitRecords,
  created_at: instant,
});

export const AdminApiKeyInfo = v.strictObject({ ...ApiKeyInfo.entries, user_id: uuid });

// Runs

export const RunRecord = v.strictObject({
  id: uuid,
  conversation_id: uuid,
  agent_id: v.nullable(uuid),
  agent_version: described(v.nullable(count), 'The version of its agent the run started with and runs on to the end, also after a crash (DESIGN §20); null without an agent'),
  mode: v.picklist(['react', 'dag']),
  status: runStatus,
  required_action: described(
    v.nullable(v.strictObject({ tool_calls: v.array(v.strictObject({ id: v.string(), name: v.string(), arguments: v.record(v.string(), v.unknown()) })) })),
    "The client tool calls the run waits on while `requires_action` (DESIGN §23): answer them with POST /api/runs/{id}/tool-outputs; null otherwise",
  ),
  query: described(v.nullable(v.string()), 'The question; null once its conversation was deleted (the record stays for usage, without content)'),
  answer: v.nullable(v.string()),
  output: described(v.unknown(), 'DESIGN §23: the answer parsed as JSON, valid against the output schema of the run (or of its agent); null for prose runs'),
  finish_reason: v.nullable(v.picklist(FINISH_REASONS)),
  error: v.nullable(v.strictObject({ code: v.string(), message: v.string() })),
  usage: v.nullable(tokenCounts),
  cost: described(v.nullable(v.number()), "What the run cost at its model's price when it ended (DESIGN §18); null until it ends, or when the model has no price"),
  user_metadata: v.nullable(v.string()),
  trace_id: described(v.nullable(v.string()), 'The OpenTelemetry trace of the run (DESIGN §18): the request that started it, its worker attempts, model and tool calls; null when tracing is off'),
  schedule_id: described(v.nullable(uuid), 'The schedule that started the run (DESIGN §19); null for runs started otherwise'),
  created_at: instant,
  started_at: v.nullable(instant),
  finished_at: v.nullable(instant),
});
/** 202 to a cancel: the run stops promptly and ends with `done {status: "cancelled"}`. */
export const CancelAccepted = v.strictObject({ run_id: uuid, status: v.literal('cancelling') });

/** One event of a run's stream: `id:` (a Redis stream id), `event:` (its type) and `data:` (one line of JSON). */
export const RunEvent = v.union(Object.entries(eventSchemas).map(([type, data]) => v.strictObject({ event: v.literal(type), id: v.string(), data })));

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
    '| `answer` | `{message_id, content, finish_reason: "stop" \\| "length" \\| "content_filter", citations: [{chunk_id, document_id, document_name, page}]}` |',
    '| `error` | `{code, message, retryable}` |',
    '| `done` | `{status: "succeeded" \\| "failed" \\| "cancelled", usage, duration_ms}` (always last) |',
  ].join('\n'),
  schema: RunEvent,
};

export const runStreamHeaders = { 'X-Run-Id': 'The run being streamed', 'X-Conversation-Id': "The run's conversation" };

// Conversations and agents

export const ConversationRecord = v.strictObject({
  id: uuid,
  agent_id: v.nullable(uuid),
  title: v.string(),
  summary: described(v.nullable(v.string()), "The conversation's oldest turns, summarised by its agent's model once the transcript outgrew 80% of the context window (DESIGN §20); null until then. The messages themselves are kept"),
  summary_through: described(v.nullable(uuid), 'The last message the summary covers; later runs extend it from there'),
  metadata: described(v.record(v.string(), v.string()), 'At most 16 string pairs (keys up to 64 characters, values up to 512), as OpenAI\'s; {} when none'),
  created_at: instant,
  updated_at: instant,
});
const imageType = v.picklist(['image/png', 'image/jpeg', 'image/webp', 'image/gif']);
const fileFacts = {
  id: uuid,
  filename: v.string(),
  content_type: described(imageType, 'Read from the bytes, not from the upload'),
  size_bytes: count,
  width: described(count, 'Pixels, as the image is shown (EXIF orientation applied)'),
  height: count,
};
/** DESIGN §15: an uploaded image. */
export const FileRecord = v.strictObject({ ...fileFacts, sha256: described(v.string(), 'Hex SHA-256 of the bytes'), created_at: instant });
const AttachmentRecord = v.union([
  v.strictObject({ ...fileFacts, deleted: v.literal(false) }),
  described(v.strictObject({ id: uuid, filename: v.string(), deleted: v.literal(true) }), 'A file deleted since: its name stays in history'),
]);

export const MessageRecord = v.strictObject({
  id: uuid,
  run_id: v.nullable(uuid),
  role: v.picklist(['user', 'assistant', 'system']),
  content: v.string(),
  injected: v.boolean(),
  citations: described(
    v.array(v.strictObject({ chunk_id: v.string(), document_id: uuid, document_name: v.string(), page: v.nullable(v.number()) })),
    'The knowledge-base passages an answer used; empty for user messages and answers without sources',
  ),
  attachments: described(v.array(AttachmentRecord), 'The images the message was sent with (image_ids)'),
  created_at: instant,
});
/** DESIGN §20: one page of a conversation's messages, newest first; the next (older) page is `?before=<next_before>`. */
export const MessagePage = v.strictObject({
  items: v.array(MessageRecord),
  limit: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100)),
  has_more: described(v.boolean(), 'Older messages remain'),
  next_before: described(v.nullable(uuid), 'The `before` of the next (older) page: the oldest message of this one; null when none remain'),
});
export const AgentDefaultsRecord = v.strictObject({
  model: described(v.string(), "The deployment's default model: what an agent whose model is null runs on (`local`, or GATEWAY_MODEL under MODEL_PROVIDER=gateway)"),
  gateway: described(v.boolean(), 'A model gateway is configured (GATEWAY_URL): agents may name gateway models, and the API format, reasoning, thinking budget and gateway tools apply to them'),
});
export const AgentRecord = v.strictObject({
  id: uuid,
  name: v.string(),
  instructions: v.string(),
  model: described(v.nullable(v.string()), "The agent's model; null: the deployment's default model (`local`, or GATEWAY_MODEL under MODEL_PROVIDER=gateway), decided when each run starts"),
  tools: v.array(v.picklist(TOOL_NAMES)),
  max_iterations: v.number(),
  knowledge_base_ids: v.array(uuid),
  api_format: v.picklist(API_FORMATS),
  reasoning_effort: v.nullable(v.picklist(REASONING_EFFORTS)),
  thinking_budget: v.nullable(v.number()),
  max_tokens: v.nullable(v.number()),
  context_window: described(v.nullable(v.number()), "Tokens the model reads and writes per call (DESIGN §20); null: the model's default (local 8,192; gateway models DEFAULT_CONTEXT_WINDOW)"),
  gateway_tools: v.array(GatewayToolSchema),
  tool_approval: v.union([v.picklist(['never', 'always']), v.array(v.string())]),
  output_schema: described(v.nullable(v.record(v.string(), v.unknown())), "DESIGN §23: the JSON Schema its runs' final answers are valid against (a run's own output_schema overrides it); null: prose answers"),
  connector_ids: v.array(uuid),
  version: described(v.pipe(v.number(), v.integer(), v.minValue(1)), 'DESIGN §20: 1 when created, one more for each PATCH or restore; GET /api/agents/{id}/versions lists them'),
  created_at: instant,
  updated_at: instant,
});
/** DESIGN §20: one version of an agent: its number, its configuration then (the fields of creation), and when it was made. */
export const AgentVersionRecord = v.strictObject({
  version: v.pipe(v.number(), v.integer(), v.minValue(1)),
  ...Object.fromEntries(Object.entries(AgentRecord.entries).filter(([field]) => !['id', 'version', 'created_at', 'updated_at'].includes(field))),
  created_at: described(instant, 'When the version was made'),
});

// Knowledge

export const KnowledgeBaseRecord = v.strictObject({
  id: uuid,
  name: v.string(),
  description: v.string(),
  chunk_strategy: v.picklist(CHUNK_STRATEGIES),
  chunk_size: v.number(),
  chunk_overlap: v.number(),
  retrieval_mode: v.picklist(RETRIEVAL_MODES),
  document_count: count,
  total_chunks: count,
  status: v.picklist(KNOWLEDGE_BASE_STATUSES),
  is_active: v.boolean(),
  embedding_model: described(v.string(), '`local` (the built-in lexical embedder) or a gateway embedding model'),
  embedding_dimensions: count,
  rerank_model: v.nullable(v.string()),
  indexing: described(
    v.nullable(v.strictObject({ model: v.string(), done: count, total: count })),
    'While a new embedding model re-embeds the chunks: its progress (retrieval answers from the previous vectors meanwhile)',
  ),
  error: described(v.nullable(v.string()), 'Why the last re-embedding stopped (the previous vectors were kept)'),
  created_at: instant,
  updated_at: instant,
});
export const DocumentRecord = v.strictObject({
  id: uuid,
  knowledge_base_id: uuid,
  name: v.string(),
  content_type: v.string(),
  size_bytes: count,
  status: v.picklist(['processing', 'ready', 'failed']),
  error: v.nullable(v.string()),
  chunk_count: count,
  created_at: instant,
  updated_at: instant,
});
export const RetrieveResult = v.strictObject({
  query: v.string(),
  retrieval_mode: v.picklist(RETRIEVAL_MODES),
  reranked: described(v.nullable(v.boolean()), 'true when the rerank model ordered the records; false when it failed and the fused order stands; null without one'),
  records: v.array(
    v.strictObject({
      chunk_id: v.string(),
      document_id: uuid,
      document_name: v.string(),
      page: described(v.nullable(v.number()), 'The PDF page of the chunk; null for formats without pages'),
      content: v.string(),
      score: v.number(),
      position: v.number(),
    }),
  ),
});

// Connectors and webhooks

const toolSummary = v.strictObject({ name: v.string(), description: v.string() });
export const ConnectorRecord = v.strictObject({
  id: uuid,
  name: v.string(),
  kind: v.literal('mcp'),
  url: v.string(),
  transport: v.string(),
  description: v.string(),
  is_active: v.boolean(),
  secret_headers: described(v.array(v.string()), 'The names of the configured headers; their values are never returned'),
  status: v.picklist(['unknown', 'ok', 'error']),
  last_error: v.nullable(v.string()),
  last_checked_at: v.nullable(instant),
  tools: v.array(toolSummary),
  created_at: instant,
  updated_at: instant,
});
export const ConnectorTestResult = v.strictObject({
  status: v.picklist(['ok', 'error']),
  tools: v.array(v.strictObject({ name: v.string(), description: v.string(), input_schema: v.record(v.string(), v.unknown()) })),
  error: v.optional(v.string()),
  latency_ms: v.number(),
});
export const WebhookRecord = v.strictObject({
  id: uuid,
  url: v.string(),
  description: v.string(),
  events: v.array(v.picklist(WEBHOOK_EVENTS)),
  is_active: v.boolean(),
  disabled_reason: v.nullable(v.string()),
  consecutive_failures: count,
  created_at: instant,
  updated_at: instant,
});
export const WebhookWithSecret = v.strictObject({ ...WebhookRecord.entries, secret: described(v.string(), 'The signing secret (whsec_…), shown in this response only') });
export const DeliveryRecord = v.strictObject({
  id: uuid,
  event: v.picklist(WEBHOOK_EVENTS),
  run_id: v.nullable(uuid),
  status: v.picklist(['pending', 'delivered', 'failed']),
  attempts: count,
  last_status_code: v.nullable(v.number()),
  last_error: v.nullable(v.string()),
  next_attempt_at: v.nullable(instant),
  created_at: instant,
});

// Schedules (DESIGN §19)

/** 202 to a run started without a stream (POST /api/runs, POST /api/schedules/{id}/trigger). */
export const RunAccepted = v.strictObject({ run_id: uuid, conversation_id: uuid, status: v.literal('queued') });
export const ScheduleRecord = v.strictObject({
  id: uuid,
  name: v.string(),
  agent_id: v.nullable(uuid),
  mode: v.picklist(['react', 'dag']),
  q: v.string(),
  cron: described(v.nullable(v.string()), '5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first, read in `timezone`; null when every_seconds is set'),
  every_seconds: described(v.nullable(count), 'Seconds between runs, the first one interval after it is set; null when cron is set'),
  timezone: described(v.string(), 'The IANA time zone the cron is read in (DST follows it)'),
  conversation_id: described(v.nullable(uuid), 'The conversation every run continues; null: each run starts a new one'),
  enabled: v.boolean(),
  next_run_at: described(v.nullable(instant), 'When the next tick is planned; null while disabled'),
  last_run_at: v.nullable(instant),
  last_run_id: v.nullable(uuid),
  skipped_runs: described(count, "Ticks that started no run: the conversation's previous run still active, the active-run cap, a spent token budget, or the agent or conversation gone"),
  last_skip_reason: described(v.nullable(v.picklist(SKIP_REASONS)), 'Why the last skipped tick started no run'),
  created_at: instant,
  updated_at: instant,
});

/** Named schemas: each becomes `#/components/schemas/<name>` in the document. */
export const namedRecords: Record<string, v.GenericSchema> = {
  Error: ErrorBody,
  AuthError: AuthErrorBody,
  HTTPValidationError: ValidationErrorBody,
  InternalError: InternalErrorBody,
  StreamGone: GoneBody,
  User: PublicUser,
  AdminUser,
  TokenPair,
  UserApiKeyInfo: ApiKeyInfo,
  Run: RunRecord,
  RunEvent,
  Conversation: ConversationRecord,
  Message: MessageRecord,
  MessagePage,
  File: FileRecord,
  Agent: AgentRecord,
  AgentVersion: AgentVersionRecord,
  KnowledgeBase: KnowledgeBaseRecord,
  Document: DocumentRecord,
  RetrieveResult,
  Connector: ConnectorRecord,
  ConnectorTestResult,
  Webhook: WebhookRecord,
  WebhookDelivery: DeliveryRecord,
  Schedule: ScheduleRecord,
};
