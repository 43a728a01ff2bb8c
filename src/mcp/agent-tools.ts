import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Models } from '../db/models.js';
import { AgentToolNames, type NamedAgent } from './tool-names.js';
import { MAX_QUERY_LENGTH } from './call-arguments.js';

/** How many of a caller's agents are tools: the most recently created. */
export const MCP_AGENT_TOOLS_MAX = 200;
/** How much of an agent's instructions its tool's description quotes. */
const DESCRIPTION_EXCERPT = 500;

export interface AgentOfTool extends NamedAgent {
  instructions: string;
}

const inputSchema = {
  type: 'object',
  properties: {
    q: { type: 'string', minLength: 1, maxLength: MAX_QUERY_LENGTH, description: 'The question or task for the agent' },
    conversation_id: {
      type: 'string',
      format: 'uuid',
      description: "Continue this conversation (an earlier call's structuredContent.conversation_id); absent: a new conversation",
    },
  },
  required: ['q'],
  additionalProperties: false,
} satisfies Tool['inputSchema'];

const outputSchema = {
  type: 'object',
  properties: {
    answer: { type: 'string', description: "The agent's answer (empty when the run did not succeed)" },
    run_id: { type: 'string', format: 'uuid', description: 'The run: GET /api/runs/{run_id}' },
    conversation_id: { type: 'string', format: 'uuid', description: 'Pass it back as conversation_id to continue' },
    status: { type: 'string', enum: ['succeeded', 'failed', 'cancelled', 'interrupted'] },
  },
  required: ['answer', 'run_id', 'conversation_id', 'status'],
  additionalProperties: false,
} satisfies NonNullable<Tool['outputSchema']>;

function excerpt(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1).trimEnd()}…`;
}

function description(agent: AgentOfTool): string {
  const intro = `Ask the agent "${excerpt(agent.name, 200)}" (one run of it; the answer is text).`;
  const instructions = excerpt(agent.instructions ?? '', DESCRIPTION_EXCERPT);
  return instructions ? `${intro} Its instructions: ${instructions}` : intro;
}

/** One caller's agents as MCP tools: the list, and the agent a tool name names. */
export class AgentToolCatalog {
  private constructor(private readonly names: AgentToolNames<AgentOfTool>) {}

  static of(agents: readonly AgentOfTool[]): AgentToolCatalog {
    return new AgentToolCatalog(new AgentToolNames(agents));
  }

  get tools(): Tool[] {
    return this.names.entries.map(([name, agent]) => ({ name, title: agent.name, description: description(agent), inputSchema, outputSchema }));
  }

  resolve(name: string): AgentOfTool | undefined {
    return this.names.resolve(name);
  }
}

/** Reads a caller's agents (at most MCP_AGENT_TOOLS_MAX, newest first) as a catalog; another user's agents are never read. */
export class AgentTools {
  constructor(
    private readonly models: Pick<Models, 'Agent'>,
    private readonly max = MCP_AGENT_TOOLS_MAX,
  ) {}

  async forUser(userId: string): Promise<AgentToolCatalog> {
    const rows = await this.models.Agent.query()
      .select('id', 'name', 'instructions', 'created_at')
      .where({ user_id: userId })
      .whereNull('deleted_at')
      .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
      .limit(this.max);
    return AgentToolCatalog.of(rows.map(({ id, name, instructions, created_at }) => ({ id, name, instructions, created_at })));
  }
}
