import type { Logger } from '../../src/logger.js';
import type { Models } from '../../src/db/models.js';
import type { Sealer } from '../../src/crypto/sealed.js';
import { loadConnectorEndpoints } from '../connectors/load.js';
import { ConnectorSessions, type ConnectorSessionOptions, type ConnectorToolSpec } from '../connectors/sessions.js';
import { ToolError, toolsFor } from './registry.js';
import type { Tool } from './tool.js';

/** What a worker process keeps for connector tools across runs: one outbound pool, one tool-list cache, the sealer. */
export interface ConnectorRuntime {
  models: Models;
  sealer: Sealer;
  sessions: ConnectorSessionOptions;
}

export interface ToolsetRequest {
  runId: string;
  userId: string;
  /** The agent's built-in tools (knowledge_base_retrieve included when it has knowledge bases). */
  tools: string[];
  connectorIds: string[];
  /** The run's signal: a cancel aborts tool listing and every connector call in flight. */
  signal: AbortSignal;
}

/** One attempt's tools. `tools` settles once connector tools are listed; `close` ends the attempt's MCP sessions. */
export interface RunToolset {
  tools: Promise<Tool[]>;
  close(): Promise<void>;
}

/** A connector tool as the loops see it: a failure of its server is an error result (ToolError), a cancel escapes. */
function connectorTool(spec: ConnectorToolSpec, sessions: ConnectorSessions): Tool {
  return {
    name: spec.name,
    description: spec.description,
    parameters: spec.parameters,
    mcpName: spec.tool,
    async run(args) {
      const { output, isError } = await sessions.call(spec.connectorId, spec.tool, args);
      if (isError) throw new ToolError(output);
      return output;
    },
  };
}

/**
 * Resolves a run attempt's tools (DESIGN §8): the built-in ones at once; with connectors, the agent's own active ones
 * loaded (headers unsealed) and their tools listed (from the worker's cache while fresh) as `<connector>__<tool>`.
 * An agent without connectors costs nothing more: no query, no session. A connector that cannot be loaded or listed is
 * logged and left out (or offered with its stored tools), so the run goes on.
 */
/** `logger` is the run's own (its ids on every line). */
export function openToolset(request: ToolsetRequest, runtime: ConnectorRuntime, logger: Logger): RunToolset {
  const builtins = toolsFor(request.tools);
  if (request.connectorIds.length === 0) return { tools: Promise.resolve(builtins), close: async () => {} };
  let sessions: ConnectorSessions | undefined;
  // Ending the attempt also stops a listing still under way (a run that failed before it needed its tools).
  const ending = new AbortController();
  const signal = AbortSignal.any([request.signal, ending.signal]);
  const report = (problems: { connectorId: string; name: string; error: string }[]) => {
    for (const { connectorId, error } of problems) logger.warn({ connector_id: connectorId, error }, 'connector unavailable to the run');
  };
  const tools = (async () => {
    const { endpoints, problems } = await loadConnectorEndpoints(runtime.models, runtime.sealer, request.userId, request.connectorIds);
    report(problems);
    if (endpoints.length === 0) return builtins;
    sessions = new ConnectorSessions(endpoints, runtime.sessions, signal);
    const listed = await sessions.toolset();
    report(listed.problems);
    const open = sessions;
    return [...builtins, ...listed.tools.map((spec) => connectorTool(spec, open))];
  })();
  // Whoever awaits `tools` sees a failure; an attempt that ends before it needs its tools must not crash on one.
  tools.catch(() => {});
  return {
    tools,
    async close() {
      ending.abort(new Error('the run attempt ended'));
      await tools.catch(() => {});
      await sessions?.close();
    },
  };
}
