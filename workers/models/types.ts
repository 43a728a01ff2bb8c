import type { FinishReason, Usage } from '../../src/shared/events.js';
import type { Tool } from '../tools/tool.js';
import type { GenerationSettings } from '../../src/shared/model-settings.js';
import type { Logger } from '../../src/logger.js';
import type { Attachment } from '../../src/shared/attachments.js';
import type { ImageSource } from '../../src/files/model-images.js';

export interface ToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  /** Set when the model's arguments were not a JSON object: the call answers with this error. */
  invalidArguments?: string;
}

export type ChatMessage =
  /** `memories`: what was recalled before the run (DESIGN §25), also in `content`; the local model quotes from it. */
  | { role: 'system'; content: string; memories?: string[] }
  | { role: 'user'; content: string; injected?: boolean; images?: Attachment[] }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  | { role: 'tool'; content: string; toolCallId: string; name: string; isError?: boolean };

export interface ModelRequest {
  /** The agent's model name (the local model ignores it). */
  model: string;
  settings: GenerationSettings;
  messages: ChatMessage[];
  tools: Tool[];
  signal: AbortSignal;
  /** The run's logger (its ids on every line); the provider's own when absent. */
  log?: Logger;
  /** The bytes of the images user messages carry (a provider that only names them never asks). */
  imageSource?: ImageSource;
}

/** A plan is asked for with the run's question and its images; the provider knows how to phrase that for its model. */
export type PlanRequest = Omit<ModelRequest, 'messages' | 'tools'> & { query: string; images?: Attachment[] };

/**
 * A conversation's oldest turns to fold into its summary (DESIGN §20): the summary so far (null at
 * first) and the messages after it, oldest first; `settings.maxTokens` is the summary's size.
 */
export type SummaryRequest = Omit<ModelRequest, 'messages' | 'tools' | 'imageSource'> & { previous: string | null; messages: ChatMessage[] };

/** Where a provider streams what it produces while it produces it. */
export interface ModelSink {
  token(text: string): Promise<unknown>;
  thought(text: string): Promise<unknown>;
  /** Something the client should know about the call itself (a fallback model): shown even where the model's stream is not. */
  notice(text: string): Promise<unknown>;
}

export type { FinishReason };

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
  /** Whether the same request always streams the same events (the local model); decides how a resumed run re-publishes. */
  readonly deterministic: boolean;
  complete(request: ModelRequest, sink: ModelSink): Promise<ModelResult>;
  /** Splits a query into a DAG of tasks; the last node synthesises the others. */
  plan(request: PlanRequest): Promise<{ nodes: PlanNode[]; usage: Usage }>;
  /** The summary extended with the request's messages; nothing is streamed to the client. */
  summarize(request: SummaryRequest): Promise<{ text: string; usage: Usage }>;
}

export const SYNTHESIS_NODE = 'synthesis';
/** Tool-message name carrying a DAG node's output into the synthesis step. */
export const NODE_OUTPUT = 'dag_node';

/** The messages of the current turn: from the last non-injected user message on. */
export function currentTurn(messages: ChatMessage[]): ChatMessage[] {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === 'user' && !m.injected) return messages.slice(i);
  }
  return messages;
}
