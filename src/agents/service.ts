import type { Knex } from 'knex';
import type { Models, Agent } from '../db/models.js';
import type { ToolApproval, ToolName } from '../shared/tools.js';
import { NotFoundError, ValidationError, type ValidationIssue } from '../shared/errors.js';
import { generationSettings, settingsProblems, type GatewayTool, type StoredSettings } from '../shared/model-settings.js';
import type { GatewayConfig } from '../config.js';
import { destinationProblem, type LookupFunction, type OutboundPolicy } from '../net/outbound.js';
import { findOwned, listOwned } from '../db/owned.js';
import type { Pagination } from '../http/validation.js';
import type { KnowledgeService } from '../knowledge/service.js';
import type { ConnectorService } from '../connectors/service.js';
import type { ScheduleService } from '../schedules/service.js';
import { pageOf, type Page } from '../shared/pages.js';
import { presentAgent, type AgentDefaults } from './records.js';

export interface NewAgent extends StoredSettings {
  name: string;
  instructions: string;
  /** Null or absent: the deployment's default (`local`, or GATEWAY_MODEL under MODEL_PROVIDER=gateway), decided when each run starts. */
  model?: string | null;
  tools: ToolName[];
  max_iterations: number;
  knowledge_base_ids: string[];
  connector_ids: string[];
  tool_approval: ToolApproval;
  /** DESIGN §23: the JSON Schema its runs' final answers satisfy; null: prose. */
  output_schema?: Record<string, unknown> | null;
  /** DESIGN §25: recall and remember the user's memories. */
  memory?: boolean;
}

const issue = (loc: (string | number)[], msg: string, input: unknown): ValidationIssue => ({ loc: ['body', ...loc], msg: `Value error, ${msg}`, type: 'value_error', input });

/** A PATCH (DESIGN §20): any field of creation; those absent stay as they are. */
export type AgentChanges = Partial<NewAgent>;
/** An agent's whole configuration; a null model follows the deployment's default. */
type AgentConfig = NewAgent & { model: string | null };

const throwIfAny = (problems: ValidationIssue[]) => {
  if (problems.length > 0) throw new ValidationError(problems);
};

/** The columns of an agent that are not its configuration; every other column is versioned (so is one added later). */
const NOT_CONFIG = ['id', 'user_id', 'version', 'created_at', 'updated_at', 'deleted_at'] as const;
/** An agent row's configuration as `agent_versions` keeps it. */
const CONFIG_OF_ROW = `to_jsonb(a) - array[${NOT_CONFIG.map((column) => `'${column}'`).join(', ')}]`;

/** An agent's configuration: its fields of creation, as they are now. */
function configOf(agent: Agent): Record<string, unknown> {
  const json = agent.toJSON() as Record<string, unknown>;
  for (const column of NOT_CONFIG) delete json[column];
  return json;
}

/** Lists stored without repeats. */
function normalized<A extends Pick<NewAgent, 'tools' | 'connector_ids' | 'tool_approval'>>(agent: A): A {
  const toolApproval = Array.isArray(agent.tool_approval) ? [...new Set(agent.tool_approval)] : agent.tool_approval;
  return { ...agent, tools: [...new Set(agent.tools)], connector_ids: [...new Set(agent.connector_ids)], tool_approval: toolApproval };
}

/** One of an agent's versions as `GET /api/agents/{id}/versions` lists it: its number, its configuration, when it was made. */
export interface AgentVersionView {
  version: number;
  created_at: string;
  [field: string]: unknown;
}

/** A user's agents: their model settings, knowledge bases and connectors checked when they are saved (422), not when they run. */
export class AgentService {
  constructor(
    private readonly models: Models,
    private readonly knowledge: KnowledgeService,
    private readonly connectors: ConnectorService,
    /** `lookup`: name resolution for the save-time check of mcp servers; the system resolver unless a test supplies another. */
    private readonly config: { defaultModel: string; gateway: GatewayConfig; outbound: OutboundPolicy; lookup?: LookupFunction },
    /** Deleting an agent switches its schedules off (DESIGN §20). */
    private readonly schedules: Pick<ScheduleService, 'disableForAgent'>,
  ) {}

  /** What an agent without a model of its own runs on today, and whether models other than `local` can be named (a gateway is configured). */
  defaults(): AgentDefaults {
    return { model: this.config.defaultModel, gateway: Boolean(this.config.gateway.url) };
  }

  list(userId: string, page: Pagination) {
    return listOwned(this.models.Agent, userId, page, presentAgent);
  }

  own(userId: string, id: string): Promise<Agent> {
    return findOwned(this.models.Agent, userId, id, 'Agent');
  }

  async create(userId: string, input: NewAgent): Promise<Agent> {
    const agent = { ...input, model: input.model ?? null };
    throwIfAny([...this.settingsIssues(agent), ...(await this.referenceIssues(userId, agent))]);
    // Version 1 is kept with the agent, in the same transaction (DESIGN §20).
    return this.models.Agent.knex().transaction(async (trx) => {
      const created = await this.models.Agent.query(trx).insertAndFetch({ ...normalized(agent), user_id: userId });
      await this.keepVersion(trx, created.id);
      return created;
    });
  }

  /**
   * A PATCH (DESIGN §20): the fields sent replace the agent's and the result is a new version,
   * checked as a create is: the model settings' cross-field rules on the whole result; knowledge
   * bases, connectors and gateway tools as sent (what was not sent was checked when it was saved).
   * The agent's row is locked for the change, so concurrent PATCHes (and restores) make one version
   * each, numbered in turn. What needs other queries is checked before the lock is taken.
   */
  async update(userId: string, id: string, changes: AgentChanges): Promise<Agent> {
    const referenceIssues = await this.referenceIssues(userId, changes);
    return this.models.Agent.knex().transaction(async (trx) => {
      const current = await this.locked(trx, userId, id);
      const agent = { ...configOf(current), ...changes } as AgentConfig;
      throwIfAny([...this.settingsIssues(agent), ...referenceIssues]);
      return this.saveVersion(trx, current, agent);
    });
  }

  /** The agent's versions, newest first: each one's configuration as it was saved. 404 for a deleted or another user's agent. */
  async versions(userId: string, id: string, page: Pagination): Promise<Page<AgentVersionView>> {
    const agent = await this.own(userId, id);
    const knex = this.models.Agent.knex();
    const [rows, counted] = await Promise.all([
      knex('agent_versions').where({ agent_id: agent.id }).orderBy('version', 'desc').limit(page.size).offset((page.page - 1) * page.size).select('version', 'config', 'created_at'),
      knex('agent_versions').where({ agent_id: agent.id }).count({ total: '*' }),
    ]);
    // A field agents gained after a version was made (context_window after the versions' backfill) shows as null in it: unset.
    const unset = Object.fromEntries(Object.keys(configOf(agent)).map((field) => [field, null]));
    const items = (rows as { version: number; config: Record<string, unknown>; created_at: Date }[]).map(({ version, config, created_at }) => ({ version, ...unset, ...config, created_at: created_at.toISOString() }));
    return pageOf(items, Number(counted[0]?.total ?? 0), page);
  }

  /**
   * Makes version `n` current again, as a new version (DESIGN §20). Knowledge bases and connectors
   * that are gone since are left out (as deleting a connector takes it off its agents); the rest is
   * checked as a create is. 404 when the agent has no version `n`. A version never changes once
   * made, so it is read (and its references checked) before the agent's row is locked.
   */
  async restore(userId: string, id: string, n: number): Promise<Agent> {
    const agent = await this.own(userId, id);
    const kept = await this.models.Agent.knex()('agent_versions').where({ agent_id: agent.id, version: n }).first('config');
    if (!kept) throw new NotFoundError(`The agent has no version ${n}`, 'AgentVersion');
    const config = kept.config as Partial<AgentConfig>;
    const [kbs, connectors, toolIssues] = await Promise.all([
      this.knowledge.foreign(userId, config.knowledge_base_ids ?? []),
      this.connectors.foreign(userId, config.connector_ids ?? []),
      config.gateway_tools ? this.gatewayToolIssues(config.gateway_tools) : [],
    ]);
    const references = {
      ...(config.knowledge_base_ids && { knowledge_base_ids: config.knowledge_base_ids.filter((kb) => !kbs.includes(kb)) }),
      ...(config.connector_ids && { connector_ids: config.connector_ids.filter((connector) => !connectors.includes(connector)) }),
    };
    return this.models.Agent.knex().transaction(async (trx) => {
      const current = await this.locked(trx, userId, id);
      const now = configOf(current);
      // Only the columns agents have now: one added since the version was made keeps its current value.
      const restored = { ...now, ...Object.fromEntries(Object.entries(config).filter(([field]) => field in now)), ...references } as AgentConfig;
      throwIfAny([...this.settingsIssues(restored), ...toolIssues]);
      return this.saveVersion(trx, current, restored);
    });
  }

  /**
   * DESIGN §20: the agent is gone to its owner (404 from now on, also for new runs naming it) while
   * its runs, conversations and versions stay; runs already started finish on their version. Its
   * schedules are switched off (timers removed) in the same transaction. A second delete → 404.
   */
  async remove(userId: string, id: string): Promise<void> {
    await this.models.Agent.knex().transaction(async (trx) => {
      const deleted = await trx('agents').where({ id, user_id: userId }).whereNull('deleted_at').update({ deleted_at: trx.fn.now(), updated_at: trx.fn.now() });
      if (deleted === 0) throw new NotFoundError('Agent not found', 'Agent');
      await this.schedules.disableForAgent(id, trx);
    });
  }

  /** The user's agent, its row locked until the transaction ends; 404 when deleted or another user's. */
  private async locked(trx: Knex.Transaction, userId: string, id: string): Promise<Agent> {
    const agent = await this.models.Agent.query(trx).findOne({ id, user_id: userId }).whereNull('deleted_at').forUpdate();
    if (!agent) throw new NotFoundError('Agent not found', 'Agent');
    return agent;
  }

  /** The locked agent becomes `agent` as its next version, kept in `agent_versions`. */
  private async saveVersion(trx: Knex.Transaction, current: Agent, agent: AgentConfig): Promise<Agent> {
    const changes = { ...normalized(agent), version: current.version + 1, updated_at: new Date() };
    const saved = await this.models.Agent.query(trx).patchAndFetchById(current.id, changes as Partial<Agent>);
    await this.keepVersion(trx, current.id);
    return saved;
  }

  /** Keeps the agent's configuration as its current version. */
  private async keepVersion(trx: Knex.Transaction, agentId: string): Promise<void> {
    await trx.raw(`insert into agent_versions (agent_id, version, config) select a.id, a.version, ${CONFIG_OF_ROW} from agents a where a.id = ?`, [agentId]);
  }

  /** The knowledge bases and connectors named must be the user's (422 per id); an mcp gateway tool's server passes the outbound policy. */
  private async referenceIssues(userId: string, agent: Pick<AgentChanges, 'knowledge_base_ids' | 'connector_ids' | 'gateway_tools'>): Promise<ValidationIssue[]> {
    const { knowledge_base_ids: kbIds = [], connector_ids: connectorIds = [], gateway_tools: gatewayTools = [] } = agent;
    const [kbs, connectors, toolIssues] = await Promise.all([this.knowledge.foreign(userId, kbIds), this.connectors.foreign(userId, connectorIds), this.gatewayToolIssues(gatewayTools)]);
    return [
      ...toolIssues,
      ...kbs.map((id) => issue(['knowledge_base_ids', kbIds.indexOf(id)], 'no such knowledge base', id)),
      ...connectors.map((id) => issue(['connector_ids', connectorIds.indexOf(id)], 'no such connector', id)),
    ];
  }

  /** The cross-field rules of the model settings (model-settings.ts), on the model runs would use today (the default for a null one). */
  private settingsIssues(agent: StoredSettings & { model?: string | null }): ValidationIssue[] {
    const { gateway, defaultModel } = this.config;
    const model = agent.model ?? defaultModel;
    return settingsProblems(model, generationSettings(agent), gateway.families, Boolean(gateway.url)).map(({ field, message }) => issue([field], message, field === 'model' ? agent.model : agent[field]));
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
