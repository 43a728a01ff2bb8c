import type { components, operations } from '../../api/schema';
import { optionalInteger, requiredInteger } from '../../ui/forms';

export type Agent = components['schemas']['Agent'];
export type AgentBody = operations['postApiAgents']['requestBody']['content']['application/json'];
type ToolName = Agent['tools'][number];
type GatewayTool = Agent['gateway_tools'][number];
export type ApiFormat = Agent['api_format'];
export type ReasoningEffort = NonNullable<Agent['reasoning_effort']>;

/** The API's picklists (src/shared/tools.ts, model-settings.ts), typed against the generated schema so a rename breaks the build. */
export const TOOLS: { value: ToolName; label: string }[] = [
  { value: 'calculator', label: 'Calculator' },
  { value: 'current_time', label: 'Current time' },
  { value: 'knowledge_base_retrieve', label: 'Knowledge base search' },
];
export const API_FORMATS: { value: ApiFormat; label: string }[] = [
  { value: 'chat', label: 'Chat completions' },
  { value: 'responses', label: 'Responses' },
  { value: 'native', label: 'Native' },
];
export const REASONING_EFFORTS: ReasoningEffort[] = ['minimal', 'low', 'medium', 'high'];

export type Approval = 'never' | 'always' | 'listed';

/** The built-in model: it ignores the API format, reasoning, thinking budget and gateway tools (they are the gateway's). */
export const LOCAL_MODEL = 'local';
/** The model runs of this draft would use now: its own, or the deployment's default. */
export const effectiveModel = (draft: Pick<Draft, 'model'>, defaultModel: string | undefined) => draft.model.trim() || defaultModel;

/** The form's state: what the person typed, as text where the API takes numbers (empty = the default). */
export interface Draft {
  name: string;
  instructions: string;
  model: string;
  tools: ToolName[];
  /** DESIGN §25: the remember and recall tools, and the closest memories given before each run. */
  memory: boolean;
  maxIterations: string;
  knowledgeBaseIds: string[];
  connectorIds: string[];
  apiFormat: ApiFormat;
  reasoningEffort: ReasoningEffort | '';
  thinkingBudget: string;
  maxTokens: string;
  contextWindow: string;
  approval: Approval;
  approvalTools: string;
  webSearch: boolean;
  /** Gateway MCP servers, one per line: `label https://url`. */
  mcpServers: string;
}

const text = (n: number | null) => (n === null ? '' : String(n));

export function draftOf(agent?: Agent): Draft {
  const approval = agent?.tool_approval ?? 'never';
  return {
    name: agent?.name ?? '',
    instructions: agent?.instructions ?? '',
    model: agent?.model ?? '',
    tools: agent?.tools ?? ['calculator', 'current_time'],
    memory: agent?.memory ?? false,
    maxIterations: String(agent?.max_iterations ?? 8),
    knowledgeBaseIds: agent?.knowledge_base_ids ?? [],
    connectorIds: agent?.connector_ids ?? [],
    apiFormat: agent?.api_format ?? 'chat',
    reasoningEffort: agent?.reasoning_effort ?? '',
    thinkingBudget: text(agent?.thinking_budget ?? null),
    maxTokens: text(agent?.max_tokens ?? null),
    contextWindow: text(agent?.context_window ?? null),
    approval: Array.isArray(approval) ? 'listed' : approval,
    approvalTools: Array.isArray(approval) ? approval.join(', ') : '',
    webSearch: agent?.gateway_tools.some((tool) => tool.type === 'web_search_preview') ?? false,
    mcpServers: (agent?.gateway_tools ?? []).flatMap((tool) => (tool.type === 'mcp' ? [`${tool.server_label} ${tool.server_url}`] : [])).join('\n'),
  };
}

/** The body the API takes for a draft; a field it cannot be sent as throws a readable Error naming it. */
export function bodyOf(draft: Draft): AgentBody {
  const body: AgentBody = {
    name: draft.name.trim(),
    instructions: draft.instructions,
    tools: draft.tools,
    memory: draft.memory,
    max_iterations: requiredInteger(draft.maxIterations, 'Max iterations'),
    knowledge_base_ids: draft.knowledgeBaseIds,
    connector_ids: draft.connectorIds,
    api_format: draft.apiFormat,
    reasoning_effort: draft.reasoningEffort || null,
    thinking_budget: optionalInteger(draft.thinkingBudget, 'Thinking budget'),
    max_tokens: optionalInteger(draft.maxTokens, 'Max tokens'),
    context_window: optionalInteger(draft.contextWindow, 'Context window'),
    tool_approval: approvalOf(draft),
    gateway_tools: gatewayToolsOf(draft),
    // Empty: no model of its own; runs follow the deployment's default, also after it changes.
    model: draft.model.trim() || null,
  };
  return body;
}

function approvalOf(draft: Draft): AgentBody['tool_approval'] {
  if (draft.approval !== 'listed') return draft.approval;
  const names = draft.approvalTools.split(/[\s,]+/).filter(Boolean);
  if (names.length === 0) throw new Error('Name at least one tool that needs approval, or choose "never"');
  return names;
}

function gatewayToolsOf(draft: Draft): GatewayTool[] {
  const servers = draft.mcpServers
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line): GatewayTool => {
      const [label, url, ...rest] = line.split(/\s+/);
      if (!label || !url || rest.length > 0) throw new Error(`Gateway MCP servers: write each as "label https://url" (not "${line}")`);
      return { type: 'mcp', server_label: label, server_url: url };
    });
  return [...(draft.webSearch ? [{ type: 'web_search_preview' } as const] : []), ...servers];
}

/** The fields of `body` that differ from the agent: a PATCH makes a version, so only what changed is sent. */
export function changesOf(agent: Agent, body: AgentBody): Partial<AgentBody> {
  return Object.fromEntries(Object.entries(body).filter(([field, value]) => JSON.stringify(value) !== JSON.stringify(agent[field as keyof Agent]))) as Partial<AgentBody>;
}
