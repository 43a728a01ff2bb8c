import type { Agent, Models } from '../db/models.js';
import { ModelNotFoundError } from '../shared/errors.js';

/**
 * Agents as OpenAI models (DESIGN §16): `agent:<agent id>`, and `agent:default` for a run with no
 * agent (the platform's default model and tools).
 */
const PREFIX = 'agent:';
export const DEFAULT_MODEL_ID = `${PREFIX}default`;
const AGENT_MODEL = /^agent:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;
/** /v1/models lists at most this many agents, the most recently created first. */
export const MAX_LISTED_AGENTS = 500;

export const modelIdOf = (agentId: string | null) => (agentId ? `${PREFIX}${agentId}` : DEFAULT_MODEL_ID);

/** The agent a `model` names (null: no agent), or 404 model_not_found. Ownership is checked when the run starts. */
export function agentIdOf(model: string): string | null {
  if (model === DEFAULT_MODEL_ID) return null;
  const id = AGENT_MODEL.exec(model)?.[1];
  if (!id) throw notAnAgent(model);
  return id.toLowerCase();
}

export const notAnAgent = (model: string) =>
  new ModelNotFoundError(`The model "${model.slice(0, 200)}" does not exist: use "${DEFAULT_MODEL_ID}" or "agent:<agent id>" (GET /v1/models lists yours)`);

export interface ModelEntry {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  /** Not in OpenAI's object: the agent's name, which clients that show models may display. */
  name: string;
}

const seconds = (at: Date) => Math.floor(at.getTime() / 1000);
/** `created` of agent:default: the day the platform's first schema was written (it has no record of its own). */
const PLATFORM_EPOCH = Date.UTC(2026, 10, 21) / 1000;
const defaultModel = (): ModelEntry => ({ id: DEFAULT_MODEL_ID, object: 'model', created: PLATFORM_EPOCH, owned_by: 'agent-platform', name: 'Default agent' });

const agentModel = (agent: Pick<Agent, 'id' | 'name' | 'created_at' | 'user_id'>): ModelEntry => ({ id: modelIdOf(agent.id), object: 'model', created: seconds(agent.created_at), owned_by: agent.user_id, name: agent.name });
const COLUMNS = ['id', 'name', 'created_at', 'user_id'] as const;

/** The caller's agents as models, `agent:default` first. */
export async function listModels(models: Models, userId: string): Promise<ModelEntry[]> {
  const agents = await models.Agent.query().select(...COLUMNS).where({ user_id: userId }).whereNull('deleted_at').orderBy([{ column: 'created_at', order: 'desc' }, 'id']).limit(MAX_LISTED_AGENTS);
  return [defaultModel(), ...agents.map(agentModel)];
}

/** One of the caller's models, or 404 model_not_found. */
export async function findModel(models: Models, userId: string, model: string): Promise<ModelEntry> {
  const agentId = agentIdOf(model);
  if (agentId === null) return defaultModel();
  const agent = await models.Agent.query().select(...COLUMNS).findOne({ id: agentId, user_id: userId }).whereNull('deleted_at');
  if (!agent) throw notAnAgent(model);
  return agentModel(agent);
}
