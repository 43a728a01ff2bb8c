import * as v from 'valibot';
import type { Services } from '../services.js';
import { route, type Route } from '../auth/route.js';
import { AgentDefaultsSchema, AgentRecordSchema, AgentVersionSchema, presentAgent } from '../agents/records.js';
import { pageOf } from '../shared/record-schemas.js';
import { ensureOutputSchemas, integerText, outputSchemaValue, paginationQuery, uuidText } from '../http/validation.js';
import { DEFAULT_TOOLS, TOOL_NAMES } from '../shared/tools.js';
import { API_FORMATS, GatewayToolSchema, MODEL_NAME, MODEL_NAME_RULE, REASONING_EFFORTS } from '../shared/model-settings.js';
import { CONTEXT_WINDOW_MAX, CONTEXT_WINDOW_MIN } from '../shared/context-window.js';

const CreateAgentBody = v.strictObject({
  name: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(200)),
  instructions: v.optional(v.pipe(v.string(), v.maxLength(20_000)), ''),
  /** Null or absent: the deployment's default (`local`, or GATEWAY_MODEL under MODEL_PROVIDER=gateway) when each run starts. */
  model: v.optional(v.nullable(v.pipe(v.string(), v.trim(), v.regex(MODEL_NAME, MODEL_NAME_RULE))), null),
  tools: v.optional(v.pipe(v.array(v.picklist(TOOL_NAMES)), v.maxLength(TOOL_NAMES.length)), DEFAULT_TOOLS),
  max_iterations: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(50)), 8),
  knowledge_base_ids: v.optional(v.pipe(v.array(uuidText), v.maxLength(20)), []),
  api_format: v.optional(v.picklist(API_FORMATS), 'chat'),
  reasoning_effort: v.optional(v.nullable(v.picklist(REASONING_EFFORTS)), null),
  thinking_budget: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(-1), v.maxValue(1_000_000))), null),
  max_tokens: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(10_000_000))), null),
  /** DESIGN §20: tokens per model call; null: the model's default (local 8,192, gateway models DEFAULT_CONTEXT_WINDOW). */
  context_window: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(CONTEXT_WINDOW_MIN), v.maxValue(CONTEXT_WINDOW_MAX))), null),
  gateway_tools: v.optional(v.pipe(v.array(GatewayToolSchema), v.maxLength(16)), []),
  connector_ids: v.optional(v.pipe(v.array(uuidText), v.maxLength(20)), []),
  /** DESIGN §11: which tool calls wait for a person's approval: never, always, or these tools (built-in or `<connector>__<tool>`). */
  tool_approval: v.optional(
    v.union([v.picklist(['never', 'always']), v.pipe(v.array(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be a tool name'))), v.maxLength(64))]),
    'never',
  ),
  /** DESIGN §23: the JSON Schema its runs' final answers are valid against; null: prose. */
  output_schema: v.optional(outputSchemaValue, null),
  /** DESIGN §25: the user's memories recalled before each run, and the remember and recall tools. */
  memory: v.optional(v.boolean(), false),
});

/** A field of creation as a PATCH takes it: optional, without creation's default (an absent field stays as it is). */
type Patchable<S> = S extends { type: 'optional'; wrapped: infer W extends v.GenericSchema } ? v.OptionalSchema<W, undefined> : S extends v.GenericSchema ? v.OptionalSchema<S, undefined> : never;
type CreateEntries = typeof CreateAgentBody.entries;
const patchable = (schema: v.GenericSchema) => v.optional(schema.type === 'optional' ? (schema as unknown as { wrapped: v.GenericSchema }).wrapped : schema);

/**
 * DESIGN §20: any field of creation, as creation checks it (derived from CreateAgentBody, so a
 * field added there is patchable too), at least one.
 */
const UpdateAgentBody = v.pipe(
  v.strictObject(Object.fromEntries(Object.entries(CreateAgentBody.entries).map(([field, schema]) => [field, patchable(schema)])) as { [F in keyof CreateEntries]: Patchable<CreateEntries[F]> }),
  v.check((body) => Object.keys(body).length > 0, 'send at least one field of the agent to change'),
);

const AgentPath = v.object({ id: uuidText });
/** Versions are numbered from 1; past int4 no agent gets. */
const VersionPath = v.object({ id: uuidText, n: integerText({ min: 1, max: 2_147_483_647 }) });

/** Agents: scope `agents` reads them; creating, changing, restoring or deleting one needs full access (restricted users may not). */
export function agentRoutes({ agents, cpu }: Services): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/agents',
      summary: "List the caller's agents",
      auth: { scope: 'agents' },
      responses: { 200: pageOf(AgentRecordSchema) },
      query: paginationQuery,
      handle: ({ principal, query }) => agents.list(principal.user.id, query),
    }),
    route({
      method: 'GET',
      path: '/api/agent-defaults',
      summary: "The deployment's default model (what an agent with a null model runs on) and whether gateway models can be named",
      auth: { scope: 'agents' },
      responses: { 200: AgentDefaultsSchema },
      handle: () => agents.defaults(),
    }),
    route({
      method: 'GET',
      path: '/api/agents/:id',
      summary: 'Read an agent',
      auth: { scope: 'agents' },
      responses: { 200: AgentRecordSchema },
      params: AgentPath,
      handle: async ({ principal, params }) => presentAgent(await agents.own(principal.user.id, params.id)),
    }),
    route({
      method: 'POST',
      path: '/api/agents',
      summary: 'Create an agent',
      auth: { writes: true },
      responses: { 201: AgentRecordSchema },
      body: CreateAgentBody,
      status: 201,
      handle: async ({ principal, body }) => {
        await ensureOutputSchemas(cpu, [[['output_schema'], body.output_schema]]);
        return presentAgent(await agents.create(principal.user.id, body));
      },
    }),
    route({
      method: 'PATCH',
      path: '/api/agents/:id',
      summary: 'Change an agent (any field of creation): the result is its next version; runs already started keep theirs',
      auth: { writes: true },
      responses: { 200: AgentRecordSchema },
      params: AgentPath,
      body: UpdateAgentBody,
      handle: async ({ principal, params, body }) => {
        await ensureOutputSchemas(cpu, [[['output_schema'], body.output_schema]]);
        return presentAgent(await agents.update(principal.user.id, params.id, body));
      },
    }),
    route({
      method: 'DELETE',
      path: '/api/agents/:id',
      summary: 'Delete an agent: no new run may name it and its schedules are switched off; runs already started finish, runs and conversations stay',
      auth: { writes: true },
      responses: { 204: null },
      params: AgentPath,
      status: 204,
      handle: ({ principal, params }) => agents.remove(principal.user.id, params.id),
    }),
    route({
      method: 'GET',
      path: '/api/agents/:id/versions',
      summary: "An agent's versions, newest first, each with its configuration then",
      auth: { scope: 'agents' },
      responses: { 200: pageOf(AgentVersionSchema) },
      params: AgentPath,
      query: paginationQuery,
      handle: ({ principal, params, query }) => agents.versions(principal.user.id, params.id, query),
    }),
    route({
      method: 'POST',
      path: '/api/agents/:id/versions/:n/restore',
      summary: 'Make version n of an agent current again, as its next version',
      auth: { writes: true },
      responses: { 200: AgentRecordSchema },
      params: VersionPath,
      handle: async ({ principal, params }) => presentAgent(await agents.restore(principal.user.id, params.id, params.n)),
    }),
  ];
}
