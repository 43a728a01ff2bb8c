import { WebhookDelivery, WebhookEndpoint } from './webhook-models.js';
import { Model, type Pojo } from 'objection';
import type { Knex } from 'knex';
import { KbDocument, KnowledgeBase } from './knowledge-models.js';
import { Connector } from './connector-models.js';
import { StoredFile } from './file-models.js';
import { Schedule } from './schedule-models.js';
import type { Attachment } from '../shared/attachments.js';
import { generationSettings, type ApiFormat, type GatewayTool, type GenerationSettings, type ReasoningEffort } from '../shared/model-settings.js';
import type { Citation, FinishReason } from '../shared/events.js';
import type { ToolApproval, ToolName } from '../shared/tools.js';
import type { DocMode } from '../shared/doc-modes.js';
import type { Sampling } from '../shared/sampling.js';
import type { OutputFormat } from '../shared/output-schema.js';
import type { TokenBudget } from '../shared/budget-terms.js';

export type Role = 'admin' | 'member' | 'restricted';

export class User extends Model {
  static override tableName = 'users';
  id!: string;
  email!: string;
  name!: string;
  role!: Role;
  password_hash!: string;
  /** A disabled user's keys and tokens are refused (DESIGN §9). */
  is_active!: boolean;
  /** DESIGN §18: requests per minute of the user's JWTs, and the cap of each of its keys; null: none. */
  rate_limit_rpm!: number | null;
  /** DESIGN §18: model tokens per UTC day or month of all the user's runs; null: none. */
  token_budget!: TokenBudget | null;
  created_at!: Date;
  updated_at!: Date;

  static override get jsonAttributes() {
    return ['token_budget'];
  }
}

export class RefreshToken extends Model {
  static override tableName = 'refresh_tokens';
  id!: string;
  user_id!: string;
  family_id!: string;
  token_hash!: string;
  expires_at!: Date;
  used_at!: Date | null;
  revoked_at!: Date | null;
  created_at!: Date;
}

export class ApiKey extends Model {
  static override tableName = 'api_keys';
  id!: string;
  user_id!: string;
  name!: string;
  key_prefix!: string;
  key_hash!: string;
  scopes!: string | null;
  is_active!: boolean;
  expires_at!: Date | null;
  last_used_at!: Date | null;
  total_requests!: number;
  /** DESIGN §18: requests per minute (at most its user's); null: its user's, else DEFAULT_RATE_LIMIT_RPM. */
  rate_limit_rpm!: number | null;
  /** DESIGN §18: model tokens per UTC day or month of the runs this key starts; null: none of its own. */
  token_budget!: TokenBudget | null;
  created_at!: Date;
  updated_at!: Date;

  static override get jsonAttributes() {
    return ['token_budget'];
  }

  override $parseDatabaseJson(json: Pojo): Pojo {
    const parsed = super.$parseDatabaseJson(json);
    // int8 arrives from pg as a string; request counts fit in a double.
    if (parsed.total_requests !== undefined) parsed.total_requests = Number(parsed.total_requests);
    return parsed;
  }
}

export class Agent extends Model {
  static override tableName = 'agents';
  id!: string;
  user_id!: string;
  name!: string;
  instructions!: string;
  /** Null: the deployment's default model, decided when each run starts (DESIGN §17). */
  model!: string | null;
  tools!: ToolName[];
  max_iterations!: number;
  knowledge_base_ids!: string[];
  api_format!: ApiFormat;
  reasoning_effort!: ReasoningEffort | null;
  thinking_budget!: number | null;
  max_tokens!: number | null;
  gateway_tools!: GatewayTool[];
  /** DESIGN §11: which tool calls wait for a person's approval. */
  tool_approval!: ToolApproval;
  connector_ids!: string[];
  /** DESIGN §20: tokens the model reads and writes per call; null: the model's default (local 8,192, gateway DEFAULT_CONTEXT_WINDOW). */
  context_window!: number | null;
  /** DESIGN §23: the JSON Schema its runs' final answers satisfy; null: prose. */
  output_schema!: Record<string, unknown> | null;
  /** DESIGN §25: its runs recall the user's memories before they start and have the remember and recall tools. */
  memory!: boolean;
  /** DESIGN §20: 1, then one more for each PATCH or restore; `agent_versions` keeps each version's configuration. */
  version!: number;
  /** DESIGN §20: a deleted agent is gone to its owner (404) and names no new run; its runs and history stay. */
  deleted_at!: Date | null;
  created_at!: Date;
  updated_at!: Date;

  /** Its rows are soft-deleted: `findOwned` and `listOwned` (src/db/owned.ts) leave out those with `deleted_at`. */
  static readonly softDeleted = true;

  static override get jsonAttributes() {
    return ['tools', 'knowledge_base_ids', 'gateway_tools', 'connector_ids', 'tool_approval', 'output_schema'];
  }

  get generationSettings(): GenerationSettings {
    return generationSettings(this);
  }
}

export type { RunMode } from '../shared/run-statuses.js';
import { FINAL_RUN_STATUSES, type RunMode, type RunStatus } from '../shared/run-statuses.js';
import type { ClientTool, RequiredAction } from '../shared/client-tools.js';
export type { RunStatus } from '../shared/run-statuses.js';

export class Conversation extends Model {
  static override tableName = 'conversations';
  id!: string;
  user_id!: string;
  agent_id!: string | null;
  title!: string;
  /** DESIGN §20: at most 16 string pairs (keys ≤ 64 characters, values ≤ 512), as OpenAI's; `{}` when none. */
  metadata!: Record<string, string>;
  /** DESIGN §20: the oldest turns, compacted by the agent's model; extended by later runs from the message after `summary_through`. */
  summary!: string | null;
  summary_through!: string | null;
  created_at!: Date;
  updated_at!: Date;

  static override get jsonAttributes() {
    return ['metadata'];
  }
}

export class Run extends Model {
  static override tableName = 'runs';
  id!: string;
  user_id!: string;
  conversation_id!: string;
  agent_id!: string | null;
  /** The version of its agent the run started with (DESIGN §20); null without an agent, or for runs from before versions. */
  agent_version!: number | null;
  mode!: RunMode;
  status!: RunStatus;
  /**
   * The question. Null once its conversation is deleted (DESIGN §20: the record stays for usage,
   * without content); such a run is final and never loaded by a worker again, hence the type.
   */
  query!: string;
  answer!: string | null;
  finish_reason!: FinishReason | null;
  user_metadata!: string | null;
  /** How the run uses its agent's knowledge bases (DESIGN §14); null = `auto`. */
  doc_mode!: DocMode | null;
  error!: { code: string; message: string } | null;
  usage!: Record<string, number> | null;
  /** What the run cost at its model's price when it ended (DESIGN §18); numeric, so Postgres sends it as text. Null: no price. */
  cost!: string | number | null;
  /** What an OpenAI-style client asked of the model calls (DESIGN §16); null for the platform's own endpoints. */
  sampling!: Sampling | null;
  /** DESIGN §23: what the run's answer must be, as the run was asked (it overrides its agent's output_schema); null: its agent's. */
  output_format!: OutputFormat | null;
  /** DESIGN §23: the final answer parsed, once valid against the output schema; null for prose runs. */
  output!: unknown;
  /** The run's OpenTelemetry trace id (DESIGN §18); null when tracing was off (or the trace not sampled). */
  trace_id!: string | null;
  /** The schedule whose tick (or trigger) started the run (DESIGN §19); null for every other run. */
  schedule_id!: string | null;
  /** DESIGN §24: the eval whose item this run answers. */
  eval_id!: string | null;
  created_at!: Date;
  started_at!: Date | null;
  finished_at!: Date | null;
  /** The loop's saved state (workers/runs/checkpoint.ts); null until the first breakpoint. */
  checkpoint!: unknown;
  attempt!: number;
  crashes!: number;
  handed_back!: boolean;
  /** The functions the run's client runs itself (DESIGN §23); null when it sent none. */
  client_tools!: ClientTool[] | null;
  /** The calls the client must answer while the run is `requires_action`; null otherwise. */
  required_action!: RequiredAction | null;

  static override get jsonAttributes() {
    return ['error', 'usage', 'checkpoint', 'sampling', 'output_format', 'output', 'client_tools', 'required_action'];
  }

  get isFinal(): boolean {
    return (FINAL_RUN_STATUSES as readonly string[]).includes(this.status);
  }
}

export type MessageRole = 'user' | 'assistant' | 'system';

export class Message extends Model {
  static override tableName = 'messages';
  id!: string;
  seq!: number;
  conversation_id!: string;
  run_id!: string | null;
  /** `system`: a chat client's own system prompt, kept with the history it sent (DESIGN §16). */
  role!: MessageRole;
  content!: string;
  injected!: boolean;
  citations!: Citation[] | null;
  /** The images the message was sent with, as they were then (DESIGN §15). */
  attachments!: Attachment[] | null;
  /** DESIGN §20: its o200k_base tokens, counted by the worker that first read (or wrote) it; null until then. */
  tokens!: number | null;
  created_at!: Date;
}

/** Model classes bound to one knex instance; built once per process (or per test database). */
export function bindModels(knex: Knex) {
  return {
    User: User.bindKnex(knex),
    RefreshToken: RefreshToken.bindKnex(knex),
    ApiKey: ApiKey.bindKnex(knex),
    Agent: Agent.bindKnex(knex),
    Conversation: Conversation.bindKnex(knex),
    Run: Run.bindKnex(knex),
    Message: Message.bindKnex(knex),
    KnowledgeBase: KnowledgeBase.bindKnex(knex),
    KbDocument: KbDocument.bindKnex(knex),
    Connector: Connector.bindKnex(knex),
    WebhookEndpoint: WebhookEndpoint.bindKnex(knex),
    WebhookDelivery: WebhookDelivery.bindKnex(knex),
    File: StoredFile.bindKnex(knex),
    Schedule: Schedule.bindKnex(knex),
  };
}
export type Models = ReturnType<typeof bindModels>;
