import Router from '@koa/router';
import * as v from 'valibot';
import type { Services } from '../services.js';
import { guard } from '../auth/guard.js';
import type { Principal } from '../auth/authenticator.js';
import { NotFoundError, ValidationError } from '../http/errors.js';
import { paginate } from '../http/pagination.js';
import { paginationQuery, uuidText, validateBody, validateParams, validateQuery } from '../http/validation.js';
import { DEFAULT_TOOLS, TOOL_NAMES } from '../shared/tools.js';
import { API_FORMATS, GatewayToolSchema, generationSettings, REASONING_EFFORTS, settingsProblems } from '../shared/model-settings.js';
import type { GatewayConfig } from '../config.js';

const CreateAgentBody = v.strictObject({
  name: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(200)),
  instructions: v.optional(v.pipe(v.string(), v.maxLength(20_000)), ''),
  /** Absent: the deployment's default (`local`, or GATEWAY_MODEL under MODEL_PROVIDER=gateway). */
  model: v.optional(v.pipe(v.string(), v.trim(), v.regex(/^[A-Za-z0-9._:/@-]{1,200}$/, 'must be 1-200 of [A-Za-z0-9._:/@-]'))),
  tools: v.optional(v.pipe(v.array(v.picklist(TOOL_NAMES)), v.maxLength(TOOL_NAMES.length)), DEFAULT_TOOLS),
  max_iterations: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(50)), 8),
  knowledge_base_ids: v.optional(v.pipe(v.array(uuidText), v.maxLength(20)), []),
  api_format: v.optional(v.picklist(API_FORMATS), 'chat'),
  reasoning_effort: v.optional(v.nullable(v.picklist(REASONING_EFFORTS)), null),
  thinking_budget: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(-1), v.maxValue(1_000_000))), null),
  max_tokens: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(10_000_000))), null),
  gateway_tools: v.optional(v.pipe(v.array(GatewayToolSchema), v.maxLength(16)), []),
});
type CreateAgent = v.InferOutput<typeof CreateAgentBody>;

/** The cross-field rules of the model settings (model-settings.ts), as 422 issues. */
function checkModelSettings(body: CreateAgent & { model: string }, gateway: GatewayConfig) {
  const problems = settingsProblems(body.model, generationSettings(body), gateway.families, Boolean(gateway.url));
  if (problems.length === 0) return;
  throw new ValidationError(problems.map(({ field, message }) => ({ loc: ['body', field], msg: `Value error, ${message}`, type: 'value_error', input: body[field] })));
}

export function agentRoutes({ authenticator, models, knowledge, config }: Services): Router {
  const router = new Router({ prefix: '/api/agents' });
  const userId = (state: Record<string, unknown>) => (state.principal as Principal).user.id;

  router.get('/', guard(authenticator, { scope: 'agents' }), async (ctx) => {
    const page = validateQuery(ctx, paginationQuery);
    const query = models.Agent.query().where({ user_id: userId(ctx.state) }).orderBy([{ column: 'created_at', order: 'desc' }, 'id']);
    ctx.body = await paginate(query, page, (a) => a.toPublic());
  });

  router.get('/:id', guard(authenticator, { scope: 'agents' }), async (ctx) => {
    const { id } = validateParams(ctx, v.object({ id: uuidText }));
    const agent = await models.Agent.query().findOne({ id, user_id: userId(ctx.state) });
    if (!agent) throw new NotFoundError('Agent not found');
    ctx.body = agent.toPublic();
  });

  router.post('/', guard(authenticator, { writes: true }), async (ctx) => {
    const parsed = validateBody(ctx, CreateAgentBody);
    const body = { ...parsed, model: parsed.model ?? config.model.defaultModel };
    checkModelSettings(body, config.model.gateway);
    const foreign = await knowledge.foreign(userId(ctx.state), body.knowledge_base_ids);
    if (foreign.length > 0) {
      throw new ValidationError(foreign.map((id) => ({ loc: ['body', 'knowledge_base_ids', body.knowledge_base_ids.indexOf(id)], msg: 'Value error, no such knowledge base', type: 'value_error', input: id })));
    }
    const agent = await models.Agent.query().insertAndFetch({ ...body, tools: [...new Set(body.tools)], user_id: userId(ctx.state) });
    ctx.status = 201;
    ctx.body = agent.toPublic();
  });

  return router;
}
