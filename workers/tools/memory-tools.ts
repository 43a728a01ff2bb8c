import type { MemoryRecord } from '../../src/memories/records.js';
import { MEMORY_MAX_CHARS } from '../../src/memories/records.js';
import { AppError } from '../../src/shared/errors.js';
import { ToolError } from './tool-error.js';
import type { RunMemory, Tool } from './tool.js';
import { MEMORY_TOOL_NAMES } from '../../src/shared/tools.js';

export const [REMEMBER_TOOL, RECALL_TOOL] = MEMORY_TOOL_NAMES;


/** A memory as the model reads it: what it says and where it is kept, not its metadata. */
const forModel = ({ id, namespace, content, score }: MemoryRecord) => ({ id, namespace, content, ...(score === undefined ? {} : { score: Math.round(score * 1000) / 1000 }) });

function requireMemory(memory: RunMemory | undefined): RunMemory {
  if (!memory) throw new ToolError('memory is not available to this run');
  return memory;
}

/** A refusal (the user's memories are full, the gateway is down) is an error result the model reads; the run goes on. */
async function asToolResult<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof AppError) throw new ToolError(err.message);
    throw err;
  }
}

const text = (value: unknown, field: string) => {
  if (typeof value !== 'string' || !value.trim()) throw new ToolError(`${field} must be a non-empty string`);
  return value.trim();
};

export const rememberTool: Tool = {
  name: REMEMBER_TOOL,
  description: 'Saves a fact about the user for later conversations (their preferences, circumstances, what they asked you to remember). One fact per call, in a short sentence.',
  parameters: { type: 'object', properties: { content: { type: 'string', maxLength: MEMORY_MAX_CHARS } }, required: ['content'] },
  async run(args, { memory, callKey }) {
    const content = text(args.content, 'content');
    if (content.length > MEMORY_MAX_CHARS) throw new ToolError(`content is longer than ${MEMORY_MAX_CHARS} characters`);
    return forModel(await asToolResult(() => requireMemory(memory).remember(content, callKey)));
  },
};

export const recallTool: Tool = {
  name: RECALL_TOOL,
  description: "Searches what you remember about the user from earlier conversations; returns the closest memories in meaning, closest first.",
  parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
  async run(args, { memory }) {
    const query = text(args.query, 'query').slice(0, MEMORY_MAX_CHARS);
    return (await asToolResult(() => requireMemory(memory).recall(query))).map(forModel);
  },
};
