/** Tool names an agent may list; the worker's registry (workers/tools) implements each. */
export const TOOL_NAMES = ['calculator', 'current_time', 'knowledge_base_retrieve'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];
export const DEFAULT_TOOLS: ToolName[] = ['calculator', 'current_time'];
export const KNOWLEDGE_TOOL: ToolName = 'knowledge_base_retrieve';
/** The tools an agent with `memory: true` gets (DESIGN §25). */
export const MEMORY_TOOL_NAMES = ['remember', 'recall'] as const;

/** What of a run's agent (its version's settings) decides the platform's tools the run has. */
export interface ToolingAgent {
  tools: readonly string[];
  knowledge_base_ids: readonly string[];
  memory: boolean;
}

/**
 * The platform's tools a run has (connectors' tools aside): its agent's (the defaults without one),
 * knowledge search when the agent has knowledge bases, the memory tools when it has memory;
 * doc_mode `off` takes knowledge search away (DESIGN §14). The worker offers these; the web refuses
 * a client tool named like one of them.
 */
export function runToolNames(agent: ToolingAgent | undefined, docMode: string | null): string[] {
  const knowledgeBaseIds = docMode === 'off' ? [] : (agent?.knowledge_base_ids ?? []);
  const tools = (agent?.tools ?? DEFAULT_TOOLS).filter((name) => docMode !== 'off' || name !== KNOWLEDGE_TOOL);
  const knowledge = knowledgeBaseIds.length > 0 && !tools.includes(KNOWLEDGE_TOOL) ? [KNOWLEDGE_TOOL] : [];
  return [...tools, ...knowledge, ...(agent?.memory ? MEMORY_TOOL_NAMES : [])];
}

/** DESIGN §11: `never` (the default), `always`, or the names of the tools whose calls wait for a person's approval. */
export type ToolApproval = 'never' | 'always' | string[];

export function needsApproval(rule: ToolApproval, toolName: string): boolean {
  return rule === 'always' || (Array.isArray(rule) && rule.includes(toolName));
}
