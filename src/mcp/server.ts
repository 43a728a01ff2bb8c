import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, CancelledNotificationSchema, ErrorCode, ListToolsRequestSchema, McpError, RequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { BudgetRef } from '../budgets/ledger.js';
import type { RunService } from '../runs/service.js';
import { AppError } from '../shared/errors.js';
import { classifyDependencyFailure } from '../shared/outage.js';
import { API_VERSION } from '../shared/api-version.js';
import { MCP_AGENT_TOOLS_MAX, type AgentTools } from './agent-tools.js';
import { toolError, type AgentCaller } from './agent-call.js';
import { parseCallArguments } from './call-arguments.js';
import type { CallerRef, InFlightCalls } from './in-flight-calls.js';

/** What the server of one HTTP request knows of it. */
export interface McpRequestContext {
  caller: CallerRef;
  /** The token budgets of the request's credential (DESIGN §18). */
  budgets: readonly BudgetRef[];
  /** Aborts when the request's connection closed before its answer ended. */
  disconnected: AbortSignal;
  httpRequestId: string;
  log: Logger;
}

/** One request's MCP server, and the work its notifications started (to wait for before the request ends). */
export interface McpRequestServer {
  server: Server;
  settled(): Promise<void>;
}

/**
 * `tools/call` as any request of that method: the Server checks it against CallToolRequestSchema and
 * answers a malformed one with -32602 (invalid params); registered with the strict schema, the
 * Protocol's own parse would fail first and answer -32603 (internal error).
 */
const AnyToolsCall = RequestSchema.extend({ method: CallToolRequestSchema.shape.method });

/**
 * Runs a handler's own work; a failure that is not the caller's (Postgres or Redis failing, a bug) becomes a
 * JSON-RPC internal error that says no more than DESIGN §4's 500 or 503 would, never the failure's own text.
 */
async function guarded<T>(log: Logger, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof McpError) throw err;
    const unavailable = classifyDependencyFailure(err) !== undefined;
    log.error({ err }, 'MCP request failed');
    throw new McpError(ErrorCode.InternalError, unavailable ? 'A backing service (Postgres or Redis) is unavailable; retry shortly' : 'Internal error');
  }
}

/** A name the client sent, as an error repeats it: never more than a line. */
const shown = (name: string) => (name.length <= 100 ? name : `${name.slice(0, 100)}…`);

const INSTRUCTIONS =
  `Each tool is one of your agents on this platform (your ${MCP_AGENT_TOOLS_MAX} most recent). Calling it runs the agent once on \`q\` ` +
  'and answers its text; pass the conversation_id of an earlier answer to continue that conversation. Long runs report progress ' +
  'when the call carries a progressToken; cancelling the request cancels the run.';

/**
 * Builds the MCP server of one stateless Streamable HTTP request (DESIGN §16): `tools/list` = the
 * caller's agents, `tools/call` = a run of one of them, `notifications/cancelled` = cancel that run
 * wherever it is followed. The low-level Server (not McpServer): the tools are per caller, with
 * JSON Schemas, and are read from Postgres on each request.
 */
export class McpServerFactory {
  constructor(
    private readonly tools: AgentTools,
    private readonly caller: AgentCaller,
    private readonly calls: InFlightCalls,
    private readonly runs: Pick<RunService, 'cancel'>,
  ) {}

  create(context: McpRequestContext): McpRequestServer {
    const server = new Server({ name: 'agent-platform', title: 'Agent Platform agents', version: API_VERSION }, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS });
    const pending = new Set<Promise<void>>();
    server.onerror = (err) => context.log.debug({ err }, 'MCP transport error');

    server.setRequestHandler(ListToolsRequestSchema, async (request) => {
      // One page holds every tool; no cursor is ever handed out, so none is valid.
      if (request.params?.cursor !== undefined) throw new McpError(ErrorCode.InvalidParams, 'Invalid cursor: tools/list answers in one page');
      return { tools: (await guarded(context.log, () => this.tools.forUser(context.caller.userId))).tools };
    });

    server.setRequestHandler(AnyToolsCall, async (raw, extra): Promise<CallToolResult> => {
      // Checked by the Server before this handler runs: parsing again only types it.
      const request = CallToolRequestSchema.parse(raw);
      const { name } = request.params;
      const agent = (await guarded(context.log, () => this.tools.forUser(context.caller.userId))).resolve(name);
      // As McpServer answers an unknown tool: a tool result with isError, not a protocol error.
      if (!agent) return toolError(`Tool ${shown(name)} not found`);
      const args = parseCallArguments(request.params.arguments);
      if (!args.ok) return toolError(`Input validation error: Invalid arguments for tool ${name}: ${args.message}`);
      const progressToken = extra._meta?.progressToken;
      return guarded(context.log, () =>
        this.caller.call(agent.id, args.value, {
          caller: context.caller,
          budgets: context.budgets,
          requestId: extra.requestId,
          progress:
            progressToken === undefined
              ? undefined
              : ({ progress, message }) => extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress, message } }),
          disconnected: context.disconnected,
          stop: extra.signal,
          httpRequestId: context.httpRequestId,
          log: context.log,
        }),
      );
    });

    server.setNotificationHandler(CancelledNotificationSchema, (notification) => {
      const { requestId } = notification.params;
      if (requestId === undefined) return;
      const work = this.cancel(context, requestId).finally(() => pending.delete(work));
      pending.add(work);
    });

    return { server, settled: async () => void (await Promise.allSettled([...pending])) };
  }

  /** A client's `notifications/cancelled`: its call's run is cancelled, whichever process follows it. */
  private async cancel(context: McpRequestContext, requestId: string | number): Promise<void> {
    const log = context.log.child({ mcp_request_id: requestId });
    try {
      const found = await this.calls.cancel(context.caller, requestId);
      if (found.kind === 'ambiguous') log.warn({ calls: found.calls }, 'MCP cancel names a request id that several calls of this credential use: none cancelled');
      if (found.kind !== 'run') return;
      await this.runs.cancel(context.caller.userId, found.runId);
      log.info({ run_id: found.runId }, 'MCP cancel: run cancelled');
    } catch (err) {
      if (err instanceof AppError && err.status < 500) return; // The run is already over.
      log.warn({ err }, 'could not cancel the run of an MCP call');
    }
  }
}
