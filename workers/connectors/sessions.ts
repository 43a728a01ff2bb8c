import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { FetchLike } from '../../src/net/outbound.js';
import { describeConnectorError, isTimeout, McpSession, type ConnectorTransport, type McpToolInfo } from '../../src/connectors/mcp.js';
import { maskSecrets } from '../../src/connectors/secrets.js';
import { ToolNameIndex } from '../../src/connectors/tool-names.js';
import { capOutput, resultText } from './output.js';

/**
 * The worker side of connectors (DESIGN §8): one lazily opened MCP session per (run, connector), tool lists cached
 * per worker, every call bounded by CONNECTOR_TIMEOUT_MS and the run's AbortSignal, and every failure of the server
 * (an error result, a refusal, a timeout, an unreachable host) turned into an error result the model can read.
 * Only a cancel of the run itself escapes, as the signal's abort reason.
 */

/** A connector as a run uses it: header values in the clear (loaded by workers/connectors/load.ts). */
export interface ConnectorEndpoint {
  id: string;
  name: string;
  /** The name as it prefixes tool names (connectors.tool_prefix). */
  prefix: string;
  url: string;
  transport: ConnectorTransport;
  headers: Record<string, string>;
  /** Changes when the connector's configuration does; part of the tool-list cache key. */
  updatedAt: Date;
  /** The tools its last successful test found: offered when the server cannot be listed now. */
  storedTools: McpToolInfo[];
}

export interface ConnectorToolResult {
  output: string;
  isError: boolean;
}

/** A connector tool as the model is offered it. */
export interface ConnectorToolSpec {
  /** `<prefix>__<tool>`, unique within the run. */
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
  connectorId: string;
  tool: string;
}

export interface ConnectorToolset {
  tools: ConnectorToolSpec[];
  index: ToolNameIndex;
  /** Connectors whose tools could not be listed now, and why (their stored tools, if any, are offered instead). */
  problems: { connectorId: string; name: string; error: string }[];
}

/** Tool lists per connector configuration, shared by the runs of one worker process. */
export class ToolListCache {
  private readonly entries = new Map<string, { tools: McpToolInfo[]; expires: number }>();

  constructor(
    private readonly ttlMs = 60_000,
    private readonly maxEntries = 1000,
    private readonly now: () => number = Date.now,
  ) {}

  private key(connector: ConnectorEndpoint) {
    return `${connector.id}@${connector.updatedAt.getTime()}`;
  }

  get(connector: ConnectorEndpoint): McpToolInfo[] | undefined {
    const key = this.key(connector);
    const entry = this.entries.get(key);
    if (entry && entry.expires > this.now()) return entry.tools;
    if (entry) this.entries.delete(key);
    return undefined;
  }

  set(connector: ConnectorEndpoint, tools: McpToolInfo[]): void {
    this.entries.delete(this.key(connector));
    // Oldest first in insertion order: drop from the front when full.
    while (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(this.key(connector), { tools, expires: this.now() + this.ttlMs });
  }
}

export interface ConnectorSessionOptions {
  /** The outbound policy's fetch (one OutboundClient per worker process). */
  fetch: FetchLike;
  cache: ToolListCache;
  timeoutMs: number;
  maxOutputBytes: number;
}

/** Protocol errors the server sent back: the session is fine, the request was not. */
const answeredByServer = (err: unknown) => err instanceof McpError && err.code !== ErrorCode.ConnectionClosed && err.code !== ErrorCode.RequestTimeout;

/** The connector sessions of one run: create at run start, `close` at run end (success, failure or cancel). */
export class ConnectorSessions {
  private readonly connectors: Map<string, ConnectorEndpoint>;
  private readonly sessions = new Map<string, Promise<McpSession>>();
  private closed = false;

  constructor(
    connectors: ConnectorEndpoint[],
    private readonly options: ConnectorSessionOptions,
    private readonly runSignal: AbortSignal,
  ) {
    this.connectors = new Map(connectors.map((c) => [c.id, c]));
  }

  /** Every connector's tools, named for the model. A connector that cannot be listed offers its stored tools. */
  async toolset(): Promise<ConnectorToolset> {
    const listed = await Promise.all(
      [...this.connectors.values()].map(async (connector) => {
        try {
          return { connector, tools: await this.listTools(connector) };
        } catch (err) {
          this.runSignal.throwIfAborted();
          return { connector, tools: connector.storedTools, error: this.describe(connector, err) };
        }
      }),
    );
    const index = new ToolNameIndex(listed.map(({ connector, tools }) => ({ connectorId: connector.id, prefix: connector.prefix, tools: tools.map((t) => t.name) })));
    const tools = listed.flatMap(({ connector, tools }) =>
      tools.flatMap((tool) => {
        const name = index.nameOf(connector.id, tool.name);
        return name ? [{ name, description: tool.description, parameters: tool.input_schema, connectorId: connector.id, tool: tool.name }] : [];
      }),
    );
    const problems = listed.flatMap(({ connector, error }) => (error ? [{ connectorId: connector.id, name: connector.name, error }] : []));
    return { tools, index, problems };
  }

  /** The connector's tools: from the worker's cache while fresh, else listed over this run's session. */
  async listTools(connector: ConnectorEndpoint): Promise<McpToolInfo[]> {
    const cached = this.options.cache.get(connector);
    if (cached) return cached;
    const session = await this.session(connector);
    const tools = await session.listTools({ timeoutMs: this.options.timeoutMs, signal: this.runSignal });
    this.options.cache.set(connector, tools);
    return tools;
  }

  /**
   * Calls a tool. Never throws for the server's failures (they become `isError` results); throws the run signal's
   * reason when the run is cancelled, before or during the call.
   */
  async call(connectorId: string, tool: string, args: Record<string, unknown>): Promise<ConnectorToolResult> {
    this.runSignal.throwIfAborted();
    const connector = this.connectors.get(connectorId);
    if (!connector) return { output: `unknown connector ${connectorId}`, isError: true };
    let session: McpSession;
    try {
      session = await this.session(connector);
    } catch (err) {
      this.runSignal.throwIfAborted();
      return { output: `could not reach connector "${connector.name}": ${this.describe(connector, err)}`, isError: true };
    }
    // One controller per call, so a later cancel of the run does not touch calls already finished.
    const call = new AbortController();
    const cancel = () => call.abort(this.runSignal.reason);
    this.runSignal.addEventListener('abort', cancel, { once: true });
    try {
      const result = await session.client.callTool({ name: tool, arguments: args }, undefined, { signal: call.signal, timeout: this.options.timeoutMs });
      const text = maskSecrets(resultText(result as Parameters<typeof resultText>[0]), Object.values(connector.headers));
      return { output: capOutput(text, this.options.maxOutputBytes), isError: result.isError === true };
    } catch (err) {
      this.runSignal.throwIfAborted();
      if (!answeredByServer(err) && !isTimeout(err)) this.forget(connector.id, session);
      return { output: `${connector.name}__${tool} failed: ${this.describe(connector, err)}`, isError: true };
    } finally {
      this.runSignal.removeEventListener('abort', cancel);
    }
  }

  /** Ends every session this run opened (DELETE to the server, sockets closed). Safe to call more than once. */
  async close(): Promise<void> {
    this.closed = true;
    const opened = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(opened.map(async (pending) => (await pending.catch(() => undefined))?.close()));
  }

  /** The run's session with the connector, opened on first use; a failed opening is not kept, so a later call retries. */
  private session(connector: ConnectorEndpoint): Promise<McpSession> {
    if (this.closed) return Promise.reject(new Error('the run has ended'));
    let pending = this.sessions.get(connector.id);
    if (!pending) {
      const target = { url: connector.url, transport: connector.transport, headers: connector.headers };
      // Each attempt is bounded inside open (and closed there when it fails or the run is cancelled).
      pending = McpSession.open(target, { fetch: this.options.fetch, timeoutMs: this.options.timeoutMs, signal: this.runSignal });
      this.sessions.set(connector.id, pending);
      pending.catch(() => {
        if (this.sessions.get(connector.id) === pending) this.sessions.delete(connector.id);
      });
    }
    return pending;
  }

  /** Drops a session that broke (its server went away or lost it), so the next call opens a fresh one. */
  private forget(connectorId: string, session: McpSession): void {
    this.sessions.delete(connectorId);
    void session.close();
  }

  private describe(connector: ConnectorEndpoint, err: unknown): string {
    if (isTimeout(err)) return `timed out after ${this.options.timeoutMs} ms`;
    return describeConnectorError(err, Object.values(connector.headers));
  }
}
