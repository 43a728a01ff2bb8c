import { createHash } from 'node:crypto';
import * as v from 'valibot';

/**
 * Client tools (DESIGN §23): functions the API client runs itself. A model call that asks for one
 * parks the run (`requires_action`) until the client posts the outputs.
 */

export const CLIENT_TOOLS_MAX = 64;
export const CLIENT_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
export const CLIENT_TOOL_DESCRIPTION_MAX = 1024;
/** A tool's `parameters` JSON Schema, serialised. */
export const CLIENT_TOOL_PARAMETERS_MAX_BYTES = 16 * 1024;
/** Tool outputs one request may carry (a model step asks for at most this many calls). */
export const TOOL_OUTPUTS_MAX = 64;
/** One tool output, in bytes of UTF-8: what a model can reasonably read back, and under BODY_LIMIT_BYTES's default (a larger body is 413). */
export const TOOL_OUTPUT_MAX_BYTES = 512 * 1024;
export const CALL_ID_MAX = 200;

export interface ClientTool {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
}

/** A call the client must run: the id it answers with, the function, and its arguments. */
export interface ClientToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

/** What a run parked for its client holds on its row. */
export interface RequiredAction {
  tool_calls: ClientToolCall[];
}

export interface ToolOutput {
  call_id: string;
  output: string;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');

export const clientToolSchema = v.strictObject({
  name: v.pipe(v.string(), v.regex(CLIENT_TOOL_NAME, 'a client tool name is 1 to 64 letters, digits, _ or -')),
  description: v.optional(v.pipe(v.string(), v.maxLength(CLIENT_TOOL_DESCRIPTION_MAX))),
  parameters: v.optional(
    v.pipe(
      v.custom<Record<string, unknown>>(isPlainObject, 'parameters must be a JSON Schema object'),
      v.check((p) => jsonBytes(p) <= CLIENT_TOOL_PARAMETERS_MAX_BYTES, `parameters must be at most ${CLIENT_TOOL_PARAMETERS_MAX_BYTES} bytes of JSON`),
    ),
  ),
});

/** `client_tools` on /api/react, /api/dag and POST /api/runs: at most 64, names unique. */
export const clientToolsSchema = v.pipe(
  v.array(clientToolSchema),
  v.maxLength(CLIENT_TOOLS_MAX, `at most ${CLIENT_TOOLS_MAX} client tools`),
  v.check((tools) => new Set(tools.map((t) => t.name)).size === tools.length, 'client tool names must be unique'),
);

export const toolOutputSchema = v.strictObject({
  call_id: v.pipe(v.string(), v.minLength(1), v.maxLength(CALL_ID_MAX)),
  output: v.pipe(v.string(), v.check((s) => Buffer.byteLength(s, 'utf8') <= TOOL_OUTPUT_MAX_BYTES, `an output must be at most ${TOOL_OUTPUT_MAX_BYTES} bytes`)),
});

/** POST /api/runs/{id}/tool-outputs. */
export const toolOutputsBody = v.strictObject({
  tool_outputs: v.pipe(
    v.array(toolOutputSchema),
    v.minLength(1, 'at least one tool output'),
    v.maxLength(TOOL_OUTPUTS_MAX, `at most ${TOOL_OUTPUTS_MAX} tool outputs`),
    v.check((outputs) => new Set(outputs.map((o) => o.call_id)).size === outputs.length, 'each call_id at most once'),
  ),
});

/**
 * The id a client answers a call by: unique across runs (models reuse ids like `call_1`), and the
 * same for every attempt of the run, since it is derived from the run and the call's approval id.
 */
export function clientCallId(runId: string, approvalId: string): string {
  return `call_${createHash('sha256').update(`${runId}\n${approvalId}`).digest('hex').slice(0, 24)}`;
}
