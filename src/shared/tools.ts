/** Tool names an agent may list; the worker's registry (workers/tools) implements each. */
export const TOOL_NAMES = ['calculator', 'current_time', 'knowledge_base_retrieve'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];
export const DEFAULT_TOOLS: ToolName[] = ['calculator', 'current_time'];
