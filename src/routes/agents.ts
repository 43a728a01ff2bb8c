import * as v from 'valibot';
import type { Services } from '../services.js';
import { route, type Route } from '../http/route.js';
import { AgentRecord, pageOf } from '../http/openapi-records.js';
import { paginationQuery, uuidText } from '../http/validation.js';
import { DEFAULT_TOOLS, TOOL_NAMES } from '../shared/tools.js';
import { API_FORMATS, GatewayToolSchema, MODEL_NAME, MODEL_NAME_RULE, REASONING_EFFORTS } from '../shared/model-settings.js';

const CreateAgentBody = v.strictObject({
  name: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(200)),
  instructions: v.optional(v.pipe(v.string(), v.maxLength(20_000)), ''),
  /** Absent: the deployment's default (`local`, or GATEWAY_MODEL under MODEL_PROVIDER=gateway). */
  model: v.optional(v.pipe(v.string(), v.trim(), v.regex(MODEL_NAME, MODEL_NAME_RULE))),
  tools: v.optional(v.pipe(v.array(v.picklist(TOOL_NAMES)), v.maxLength(TOOL_NAMES.length)), DEFAULT_TOOLS),
  max_iterations: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(50)), 8),
  knowledge_base_ids: v.optional(v.pipe(v.array(uuidText), v.maxLength(20)), []),
  api_format: v.optional(v.picklist(API_FORMATS), 'chat'),
  reasoning_effort: v.optional(v.nullable(v.picklist(REASONING_EFFORTS)), null),
  thinking_budget: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(-1), v.maxValue(1_000_000))), null),
  max_tokens: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(10_000_000))), null),
  gateway_tools: v.optional(v.pipe(v.array(GatewayToolSchema), v.maxLength(16)), []),
  connector_ids: v.optional(v.pipe(v.array(uuidText), v.maxLength(20)), []),
  /** DESIGN §11: which tool calls wait for a person's approval: never, always, or these tools (built-in or `<connector>__<tool>`). */
  tool_approval: v.optional(
    v.union([v.picklist(['never', 'always']), v.pipe(v.array(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be a tool name'))), v.maxLength(64))]),
    'never',
  ),
});

const AgentPath = v.object({ id: uuidText });

/** Agents: scope `agents` reads them; creating one needs full access (restricted users may not). */
export function agentRoutes({ agents }: Services): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/agents',
      summary: "List the caller's agents",
      auth: { scope: 'agents' },
      responses: { 200: pageOf(AgentRecord) },
      query: paginationQuery,
      handle: ({ principal, query }) => agents.list(principal.user.id, query),
    }),
    route({
      method: 'GET',
      path: '/api/agents/:id',
      summary: 'Read an agent',
      auth: { scope: 'agents' },
      responses: { 200: AgentRecord },
      params: AgentPath,
      handle: async ({ principal, params }) => (await agents.own(principal.user.id, params.id)).toPublic(),
    }),
    route({
      method: 'POST',
      path: '/api/agents',
      summary: 'Create an agent',
      auth: { writes: true },
      responses: { 201: AgentRecord },
      body: CreateAgentBody,
      status: 201,
      handle: async ({ principal, body }) => (await agents.create(principal.user.id, body)).toPublic(),
    }),
  ];
}
