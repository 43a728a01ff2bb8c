import type { Usage } from '../../src/shared/events.js';
import type { Tool } from '../tools/registry.js';

export interface ToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string; injected?: boolean }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  | { role: 'tool'; content: string; toolCallId: string; name: string };

export interface ModelRequest {
  /** The agent's model name (the local model ignores it). */
  model: string;
  messages: ChatMessage[];
  tools: Tool[];
  signal: AbortSignal;
}

/** Where a provider streams what it produces while it produces it. */
export interface ModelSink {
  token(text: string): Promise<unknown>;
  thought(text: string): Promise<unknown>;
}

export type FinishReason = 'stop' | 'length' | 'content_filter';

export interface ModelResult {
  text: string;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  usage: Usage;
}

export interface PlanNode {
  id: string;
  task: string;
  depends_on: string[];
}

/** The one small interface every model provider implements. */
export interface ModelProvider {
  complete(request: ModelRequest, sink: ModelSink): Promise<ModelResult>;
  /** Splits a query into a DAG of tasks; the last node synthesises the others. */
  plan(query: string, model: string, signal: AbortSignal): Promise<PlanNode[]>;
}

export const SYNTHESIS_NODE = 'synthesis';
/** Tool-message name carrying a DAG node's output into the synthesis step. */
export const NODE_OUTPUT = 'dag_node';
