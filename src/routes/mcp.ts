import * as v from 'valibot';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Services } from '../services.js';
import { route, type Route } from '../auth/route.js';
import { credentialOf, type AccessRule } from '../auth/guard.js';
import { AgentTools } from '../mcp/agent-tools.js';
import { AgentCaller } from '../mcp/agent-call.js';
import { InFlightCalls } from '../mcp/in-flight-calls.js';
import { McpServerFactory } from '../mcp/server.js';
import { callerOf } from '../mcp/caller.js';

/** As the chat routes (DESIGN §3): scope `chat`; the credential only as a bearer header (MCP clients send it so). */
const MCP_ACCESS: AccessRule = { scope: 'chat' };
/** A recorded MCP call outlives no run: the longest a run may run, wait for approval, and a margin for the queue. */
const CALL_RECORD_MARGIN_MS = 5 * 60_000;

/** Every message on the stream is one JSON-RPC message (its shape is MCP's, https://modelcontextprotocol.io/specification). */
const JsonRpcMessage = v.looseObject({ jsonrpc: v.literal('2.0') });
const McpEvent = v.strictObject({ event: v.literal('message'), id: v.string(), data: JsonRpcMessage });
/** What the SDK's transport answers to a request it refuses (malformed JSON-RPC, a wrong Accept or Content-Type). */
const JsonRpcErrorBody = v.strictObject({
  jsonrpc: v.literal('2.0'),
  id: v.nullable(v.union([v.string(), v.number()])),
  error: v.looseObject({ code: v.number(), message: v.string() }),
});

/** A Host header that names a host as it is (what the SDK's Node transport, @hono/node-server, accepts). */
function usableHost(host: string): boolean {
  try {
    return host !== '' && new URL(`http://${host}/`).hostname === host.replace(/:\d+$/, '').toLowerCase();
  } catch {
    return false;
  }
}

/**
 * `POST /mcp` (DESIGN §16): the caller's agents as an MCP server, stateless Streamable HTTP through
 * the official SDK's transport, a fresh server per request (src/mcp/). GET and DELETE are 405 (no
 * standalone stream, no sessions), as every method a path does not serve.
 */
export function mcpRoutes({ models, runs, relay, redis, keys, config }: Services): Route[] {
  const calls = new InFlightCalls(redis, keys, config.runs.maxDurationMs + config.runs.approvalTimeoutMs + CALL_RECORD_MARGIN_MS);
  const factory = new McpServerFactory(new AgentTools(models), new AgentCaller(runs, relay, calls), calls, runs);
  return [
    route({
      method: 'POST',
      path: '/mcp',
      summary: 'Your agents as an MCP server (Streamable HTTP, stateless): tools/list, tools/call with progress and cancellation',
      auth: MCP_ACCESS,
      responses: {
        200: {
          mediaType: 'text/event-stream',
          description:
            'The JSON-RPC answer to the request(s) of the body, as server-sent events `event: message` with one JSON-RPC message each: ' +
            '`notifications/progress` while an agent runs (when the call carries `_meta.progressToken`), then the result. ' +
            'Send `Accept: application/json, text/event-stream` and `Content-Type: application/json`.',
          schema: McpEvent,
        },
        202: null,
        400: JsonRpcErrorBody,
        406: JsonRpcErrorBody,
        415: JsonRpcErrorBody,
      },
      streams: true,
      handle: async ({ principal, ctx }) => {
        // The transport rebuilds the request's URL from Host; one it cannot use would get an empty 400 from it.
        if (!usableHost(ctx.get('host'))) {
          ctx.status = 400;
          ctx.body = { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: the Host header does not name a host' } };
          return;
        }
        const disconnect = new AbortController();
        ctx.res.once('close', () => {
          if (!ctx.res.writableFinished) disconnect.abort();
        });
        ctx.req.socket.setNoDelay(true);
        ctx.req.socket.setTimeout(0);
        const { server, settled } = factory.create({
          caller: callerOf(principal, credentialOf(ctx, MCP_ACCESS)),
          budgets: principal.budgets,
          disconnected: disconnect.signal,
          httpRequestId: ctx.state.requestId,
          log: ctx.state.log,
        });
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        try {
          await server.connect(transport);
          // The transport writes the response itself.
          ctx.respond = false;
          // The body is parsed already (src/http/body.ts); none at all is a JSON-RPC parse error, not a read of a spent stream.
          await transport.handleRequest(ctx.req, ctx.res, ctx.state.body ?? null);
          await settled();
        } catch (err) {
          // Nothing written yet: the error middleware answers (DESIGN §4).
          if (!ctx.res.headersSent) ctx.respond = true;
          throw err;
        } finally {
          await server.close().catch(() => {});
        }
      },
    }),
  ];
}
