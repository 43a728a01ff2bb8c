/** Tool names an agent may list; the worker's registry (workers/tools) implements each. */
export const TOOL_NAMES = ['calculator', 'current_time', 'knowledge_base_retrieve'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];
export const DEFAULT_TOOLS: ToolName[] = ['calculator', 'current_time'];

/** DESIGN §11: `never` (the default), `always`, or the names of the tools whose calls wait for a person's approval. */
export type ToolApproval = 'never' | 'always' | string[];

export function needsApproval(rule: ToolApproval, toolName: string): boolean {
  return rule === 'always' || (Array.isArray(rule) && rule.includes(toolName));
}
