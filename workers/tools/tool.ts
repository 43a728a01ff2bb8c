import type { RetrievedChunk } from '../../src/knowledge/retrieval.js';

/** What a tool is to the loops and the model providers: its description, and how to run it (tools/registry.ts holds the built-ins). */

export interface ToolContext {
  signal: AbortSignal;
  now: () => Date;
  /** Searches the run's agent's knowledge bases (none → no records). */
  searchKnowledge: (query: string, topK: number) => Promise<RetrievedChunk[]>;
}

export interface Tool {
  /** What the model calls it: a built-in tool's name, or a connector tool's `<connector>__<tool>`. */
  name: string;
  description: string;
  /** JSON Schema of the arguments, as model providers describe functions. */
  parameters: Record<string, unknown>;
  /** Set on a connector's tool: the tool's own name on its MCP server. */
  mcpName?: string;
  /** A client tool (DESIGN §23): its client runs it; a call parks the run for the output. */
  client?: true;
  run(args: Record<string, unknown>, context: ToolContext): Promise<unknown>;
}
