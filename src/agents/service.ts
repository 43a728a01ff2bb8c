import type { Models, Agent } from '../db/models.js';
import type { ToolApproval } from '../shared/tools.js';
import { ValidationError, type ValidationIssue } from '../shared/errors.js';
import { generationSettings, settingsProblems, type GatewayTool, type StoredSettings } from '../shared/model-settings.js';
import type { GatewayConfig } from '../config.js';
import { destinationProblem, type LookupFunction, type OutboundPolicy } from '../net/outbound.js';
import { findOwned, listOwned } from '../db/owned.js';
import type { Pagination } from '../http/validation.js';
import type { KnowledgeService } from '../knowledge/service.js';
import type { ConnectorService } from '../connectors/service.js';

export interface NewAgent extends StoredSettings {
  name: string;
  instructions: string;
  /** Absent: the deployment's default (`local`, or GATEWAY_MODEL under MODEL_PROVIDER=gateway). */
  model?: string;
  tools: string[];
  max_iterations: number;
  knowledge_base_ids: string[];
  connector_ids: string[];
  tool_approval: ToolApproval;
}

const issue = (loc: (string | number)[], msg: string, input: unknown): ValidationIssue => ({ loc: ['body', ...loc], msg: `Value error, ${msg}`, type: 'value_error', input });

/** A user's agents: their model settings, knowledge bases and connectors checked when they are saved (422), not when they run. */
export class AgentService {
  constructor(
    private readonly models: Models,
    private readonly knowledge: KnowledgeService,
    private readonly connectors: ConnectorService,
    /** `lookup`: name resolution for the save-time check of mcp servers; the system resolver unless a test supplies another. */
    private readonly config: { defaultModel: string; gateway: GatewayConfig; outbound: OutboundPolicy; lookup?: LookupFunction },
  ) {}

  list(userId: string, page: Pagination) {
    return listOwned(this.models.Agent, userId, page, (agent) => agent.toPublic());
  }

  own(userId: string, id: string): Promise<Agent> {
    return findOwned(this.models.Agent, userId, id, 'Agent');
  }

  async create(userId: string, input: NewAgent): Promise<Agent> {
    const agent = { ...input, model: input.model ?? this.config.defaultModel };
    const [kbs, connectors, toolIssues] = await Promise.all([
      this.knowledge.foreign(userId, agent.knowledge_base_ids),
      this.connectors.foreign(userId, agent.connector_ids),
      this.gatewayToolIssues(agent.gateway_tools),
    ]);
    const problems = [
      ...this.settingsIssues(agent),
      ...toolIssues,
      ...kbs.map((id) => issue(['knowledge_base_ids', agent.knowledge_base_ids.indexOf(id)], 'no such knowledge base', id)),
      ...connectors.map((id) => issue(['connector_ids', agent.connector_ids.indexOf(id)], 'no such connector', id)),
    ];
    if (problems.length > 0) throw new ValidationError(problems);
    const toolApproval = Array.isArray(agent.tool_approval) ? [...new Set(agent.tool_approval)] : agent.tool_approval;
    return this.models.Agent.query().insertAndFetch({ ...agent, tools: [...new Set(agent.tools)], connector_ids: [...new Set(agent.connector_ids)], tool_approval: toolApproval, user_id: userId });
  }

  /** The cross-field rules of the model settings (model-settings.ts). */
  private settingsIssues(agent: StoredSettings & { model: string }): ValidationIssue[] {
    const { gateway } = this.config;
    return settingsProblems(agent.model, generationSettings(agent), gateway.families, Boolean(gateway.url)).map(({ field, message }) => issue([field], message, field === 'model' ? agent.model : agent[field]));
  }

  /**
   * An `mcp` tool's server is called by the gateway on the agent's behalf, so our connect-time check never sees it: the
   * outbound policy (DESIGN §8) applies to its address when saved, a name resolved then (`destinationProblem`).
   */
  private async gatewayToolIssues(tools: GatewayTool[]): Promise<ValidationIssue[]> {
    const { outbound, lookup } = this.config;
    const problems = await Promise.all(tools.map((tool) => (tool.type === 'mcp' ? destinationProblem(tool.server_url, outbound, lookup) : undefined)));
    return tools.flatMap((tool, index) => {
      const problem = problems[index];
      return problem && tool.type === 'mcp' ? [issue(['gateway_tools', index, 'server_url'], problem, tool.server_url)] : [];
    });
  }
}
