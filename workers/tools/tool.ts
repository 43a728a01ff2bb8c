import type { RetrievedChunk } from '../../src/knowledge/retrieval.js';
import type { MemoryRecord } from '../../src/memories/records.js';

/** What a tool is to the loops and the model providers: its description, and how to run it (tools/registry.ts holds the built-ins). */

export interface ToolContext {
  signal: AbortSignal;
  now: () => Date;
  /** Searches the run's agent's knowledge bases (none → no records). */
  searchKnowledge: (query: string, topK: number) => Promise<RetrievedChunk[]>;
  /** The user's memories through the run's agent (DESIGN §25); absent when its agent has no memory. */
  memory?: RunMemory;
  /** The call's idempotency key (DESIGN §28: run id and call id): an attempt repeating the call after a crash repeats no effect. */
  callKey?: string;
}

/** What a run's memory tools reach: the user's memories, through the run's agent (DESIGN §25). */
export interface RunMemory {
  /** Once per `callKey`: the call repeated gets the memory it wrote the first time. */
  remember(content: string, callKey?: string): Promise<MemoryRecord>;
  recall(query: string): Promise<MemoryRecord[]>;
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
