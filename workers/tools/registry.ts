import type { ToolName } from '../../src/shared/tools.js';
import { evaluate } from './calculator.js';
import { EmbeddingError } from '../../src/knowledge/embedders.js';
import type { ToolCall } from '../models/types.js';
import type { Tool, ToolContext } from './tool.js';
import { ToolError } from './tool-error.js';
import { recallTool, rememberTool, RECALL_TOOL, REMEMBER_TOOL } from './memory-tools.js';

export { ToolError };

const calculator: Tool = {
  name: 'calculator',
  description: 'Evaluates an arithmetic expression with + - * / % ^ and parentheses.',
  parameters: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] },
  async run(args) {
    if (typeof args.expression !== 'string') throw new ToolError('expression must be a string');
    try {
      return evaluate(args.expression);
    } catch (err) {
      throw new ToolError(`cannot evaluate "${args.expression}": ${(err as Error).message}`);
    }
  },
};

const currentTime: Tool = {
  name: 'current_time',
  description: 'Returns the current date and time in UTC (ISO 8601).',
  parameters: { type: 'object', properties: {} },
  async run(_args, { now }) {
    return now().toISOString();
  },
};

const KNOWLEDGE_TOP_K = 5;

const knowledgeBaseRetrieve: Tool = {
  name: 'knowledge_base_retrieve',
  description: "Searches the agent's knowledge bases; returns the best-matching passages, best first.",
  parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
  async run(args, { searchKnowledge }) {
    if (typeof args.query !== 'string' || !args.query.trim()) throw new ToolError('query must be a non-empty string');
    try {
      return await searchKnowledge(args.query, KNOWLEDGE_TOP_K);
    } catch (err) {
      // The gateway embedding the query failed (after its retries): the model reads why, the run goes on.
      if (err instanceof EmbeddingError) throw new ToolError(`the knowledge bases could not be searched: ${err.message}`);
      throw err;
    }
  },
};

/** The one place tools are registered: the ones agents list, and the memory tools agents with `memory: true` get (DESIGN §25). */
export const TOOLS: Record<ToolName | typeof REMEMBER_TOOL | typeof RECALL_TOOL, Tool> = {
  calculator,
  current_time: currentTime,
  knowledge_base_retrieve: knowledgeBaseRetrieve,
  remember: rememberTool,
  recall: recallTool,
};

export function toolsFor(names: readonly string[]): Tool[] {
  return names.flatMap((name) => {
    const tool = TOOLS[name as keyof typeof TOOLS];
    return tool ? [tool] : [];
  });
}

/** Runs a call; failures become an error result the model can read, never a crashed run. */
export async function runTool(tools: Tool[], call: ToolCall, context: ToolContext): Promise<{ output: unknown; isError: boolean }> {
  const tool = tools.find((t) => t.name === call.name);
  if (!tool) return { output: `unknown tool "${call.name}"`, isError: true };
  if (call.invalidArguments !== undefined) return { output: call.invalidArguments, isError: true };
  try {
    return { output: await tool.run(call.arguments, context), isError: false };
  } catch (err) {
    if (err instanceof ToolError) return { output: err.message, isError: true };
    throw err;
  }
}
