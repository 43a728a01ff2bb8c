import * as v from 'valibot';
import { described, instant, uuid } from '../shared/record-schemas.js';
import { API_FORMATS, GatewayToolSchema, REASONING_EFFORTS } from '../shared/model-settings.js';
import { TOOL_NAMES } from '../shared/tools.js';
import type { Agent } from '../db/models.js';

export const AgentDefaultsSchema = v.strictObject({
  model: described(v.string(), "The deployment's default model: what an agent whose model is null runs on (`local`, or GATEWAY_MODEL under MODEL_PROVIDER=gateway)"),
  gateway: described(v.boolean(), 'A model gateway is configured (GATEWAY_URL): agents may name gateway models, and the API format, reasoning, thinking budget and gateway tools apply to them'),
});
/** GET /api/agent-defaults: the deployment's default model, for forms that offer to leave an agent's model empty. */
export type AgentDefaults = v.InferOutput<typeof AgentDefaultsSchema>;

export const AgentRecordSchema = v.strictObject({
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
  memory: described(v.boolean(), 'DESIGN §25: its runs are given the memories closest to the question before they start, and the remember and recall tools'),
  version: described(v.pipe(v.number(), v.integer(), v.minValue(1)), 'DESIGN §20: 1 when created, one more for each PATCH or restore; GET /api/agents/{id}/versions lists them'),
  created_at: instant,
  updated_at: instant,
});
export type AgentRecord = v.InferOutput<typeof AgentRecordSchema>;

/** DESIGN §20: one version of an agent: its number, its configuration then (the fields of creation), and when it was made. */
export const AgentVersionSchema = v.strictObject({
  version: v.pipe(v.number(), v.integer(), v.minValue(1)),
  ...Object.fromEntries(Object.entries(AgentRecordSchema.entries).filter(([field]) => !['id', 'version', 'created_at', 'updated_at'].includes(field))),
  created_at: described(instant, 'When the version was made'),
});

export function presentAgent(agent: Agent): AgentRecord {
  return {
    id: agent.id,
    name: agent.name,
    instructions: agent.instructions,
    model: agent.model,
    tools: agent.tools,
    max_iterations: agent.max_iterations,
    knowledge_base_ids: agent.knowledge_base_ids,
    api_format: agent.api_format,
    reasoning_effort: agent.reasoning_effort,
    thinking_budget: agent.thinking_budget,
    max_tokens: agent.max_tokens,
    context_window: agent.context_window,
    gateway_tools: agent.gateway_tools,
    tool_approval: agent.tool_approval,
    output_schema: agent.output_schema,
    connector_ids: agent.connector_ids,
    memory: agent.memory,
    version: agent.version,
    created_at: agent.created_at.toISOString(),
    updated_at: agent.updated_at.toISOString(),
  };
}
