import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { FetchLike } from '../net/outbound.js';
import type { ConnectorTransport } from '../db/connector-models.js';
import { maskSecrets } from './secrets.js';

/**
 * The MCP client side shared by the web tier (`POST /api/connectors/{id}/test`) and the workers (tool calls in runs),
 * through the official SDK. Every request is bounded by the connector timeout; every byte goes through the outbound
 * policy's fetch.
 */

export { CONNECTOR_TRANSPORTS, type ConnectorTransport } from '../db/connector-models.js';

export interface McpTarget {
  url: string;
  transport: ConnectorTransport;
  /** Header values in the clear; they go to this server only, and never into an error text. */
  headers: Record<string, string>;
}

export interface McpOptions {
  fetch: FetchLike;
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface McpToolInfo {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

/** Largest MCP response accepted from a connector's server (a streamed response counts over its whole life). */
export const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

const CLIENT_INFO = { name: 'agent-platform', version: '0.8.9' };
/** A hostile or broken server cannot make a list endless. */
const MAX_TOOL_PAGES = 10;
const MAX_TOOLS = 500;
const MAX_DESCRIPTION = 2000;
const MAX_SCHEMA_BYTES = 32 * 1024;
const MAX_ERROR_TEXT = 500;
const CLOSE_GRACE_MS = 2000;

/** A connection that did not finish within the connector timeout. */
export class ConnectorTimeoutError extends Error {}

/** Rejects with ConnectorTimeoutError after `ms`, or with the signal's reason when it aborts first. */
export async function bounded<T>(work: Promise<T>, ms: number, signal?: AbortSignal): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stop = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ConnectorTimeoutError(`timed out after ${ms} ms`)), ms);
    onAbort = () => reject(signal!.reason);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work, stop]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}

function transportFor(target: McpTarget, kind: ConnectorTransport, fetch: FetchLike): Transport {
  const url = new URL(target.url);
  const requestInit = { headers: target.headers };
  return kind === 'sse' ? new SSEClientTransport(url, { fetch, requestInit }) : new StreamableHTTPClientTransport(url, { fetch, requestInit, reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 } });
}

/** Answers a server gives to a Streamable HTTP POST when it only speaks the legacy SSE transport. */
const speaksOnlySse = (err: unknown) => err instanceof StreamableHTTPError && [400, 404, 405].includes(err.code ?? 0);

/** An initialised MCP session with the server; close it when done. */
export class McpSession {
  private constructor(
    readonly client: Client,
    readonly transport: ConnectorTransport,
  ) {}

  /**
   * Connects over the connector's transport; a Streamable HTTP connector whose server answers like a legacy SSE-only
   * server is retried over SSE (the SDK's backwards-compatibility advice). The whole attempt is bounded.
   */
  static async open(target: McpTarget, options: McpOptions): Promise<McpSession> {
    try {
      return await McpSession.attempt(target, target.transport, options);
    } catch (err) {
      if (target.transport !== 'streamable_http' || !speaksOnlySse(err)) throw err;
      return await McpSession.attempt(target, 'sse', options);
    }
  }

  private static async attempt(target: McpTarget, kind: ConnectorTransport, { fetch, timeoutMs, signal }: McpOptions): Promise<McpSession> {
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    const transport = transportFor(target, kind, fetch);
    try {
      // connect() also covers transport.start() (the SSE stream), which the SDK's request timeout does not.
      await bounded(client.connect(transport, { timeout: timeoutMs, signal }), timeoutMs, signal);
      return new McpSession(client, kind);
    } catch (err) {
      await client.close().catch(() => {});
      throw err;
    }
  }

  /** The server's tools, every page, within the bounds above. */
  async listTools(options: Omit<McpOptions, 'fetch'>): Promise<McpToolInfo[]> {
    const tools: McpToolInfo[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_TOOL_PAGES && tools.length < MAX_TOOLS; page++) {
      const result = await this.client.listTools(cursor ? { cursor } : undefined, { timeout: options.timeoutMs, signal: options.signal });
      for (const tool of result.tools.slice(0, MAX_TOOLS - tools.length)) tools.push(toolInfo(tool));
      cursor = result.nextCursor;
      if (!cursor) break;
    }
    return tools;
  }

  /** Ends the server's session (DELETE, as the spec asks, briefly bounded) and closes the transport. */
  async close(): Promise<void> {
    const transport = this.client.transport;
    if (transport instanceof StreamableHTTPClientTransport) {
      await bounded(transport.terminateSession(), CLOSE_GRACE_MS).catch(() => {});
    }
    await this.client.close().catch(() => {});
  }
}

function toolInfo(tool: { name: string; description?: string; inputSchema: Record<string, unknown> }): McpToolInfo {
  const schemaText = JSON.stringify(tool.inputSchema ?? {});
  return {
    name: tool.name,
    description: (tool.description ?? '').slice(0, MAX_DESCRIPTION),
    input_schema: schemaText.length <= MAX_SCHEMA_BYTES ? tool.inputSchema : { type: 'object' },
  };
}

/** Whether an error is the connector timeout (ours, or the SDK's request timeout). */
export function isTimeout(err: unknown): boolean {
  return err instanceof ConnectorTimeoutError || (err instanceof McpError && err.code === ErrorCode.RequestTimeout);
}

/**
 * A short, secret-free text for an error: the chain of causes (fetch failed: connect ECONNREFUSED …), with every
 * header value the connector sends masked, cut to a bounded length.
 */
export function describeConnectorError(err: unknown, secrets: string[] = []): string {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const message = e instanceof Error ? e.message : String(e);
    if (message && !parts.includes(message)) parts.push(message);
  }
  const text = maskSecrets(parts.join(': ') || 'unknown error', secrets);
  return text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT)}…` : text;
}
