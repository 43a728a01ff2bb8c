import type { operations } from '../../api/schema';

/** The one name of "no agent" (a run on the deployment's default model and tools), as /v1/models names `agent:default`. */
export const DEFAULT_AGENT_LABEL = 'Default agent';

/** How an agent's model reads: a null model follows the deployment's default. */
export const modelLabel = (model: string | null) => model ?? 'default model';

/** The chat, started with this agent chosen. */
export const chatWithAgent = (agentId: string) => `#/chat/agent/${agentId}`;

export type AgentDefaults = operations['getApiAgentDefaults']['responses'][200]['content']['application/json'];
