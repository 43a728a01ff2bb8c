import type { Tool } from '../tools/tool.js';

/**
 * How the local model finds connector tool calls in a question (DESIGN §8): a tool's name followed by a JSON object,
 * `everything__echo {"message": "hi"}`, or with the tool's own MCP name when no other tool has it, `echo {"message": "hi"}`.
 */

export interface ToolMention {
  /** The tool's name as the model calls it (`<connector>__<tool>`). */
  tool: string;
  args: Record<string, unknown>;
  /** Where the mention starts and ends in the text. */
  start: number;
  end: number;
}

/** Bounds: a question is at most 32,000 characters, but a scan must not grow with hostile input. */
const MAX_MENTIONS = 20;
/** Names followed by `{` whose object is read: each read scans up to MAX_JSON_CHARS. */
const MAX_READS = 100;
const MAX_JSON_CHARS = 16_384;

const NAME_CHAR = /[A-Za-z0-9_-]/;

/** The names a question may use for connector tools → the exposed name. An MCP name shared by two tools (or a built-in) is left out. */
export function spokenToolNames(tools: Tool[]): Map<string, string> {
  const names = new Map<string, string>();
  const connectorTools = tools.filter((t) => t.mcpName !== undefined);
  const uses = new Map<string, number>();
  for (const t of tools) for (const name of new Set([t.name, t.mcpName ?? t.name])) uses.set(name, (uses.get(name) ?? 0) + 1);
  for (const t of connectorTools) {
    names.set(t.name, t.name);
    if (uses.get(t.mcpName!) === 1) names.set(t.mcpName!, t.name);
  }
  return names;
}

/** The JSON object that starts at `text[start]` (`{`), if it is one: balanced braces outside strings, then JSON.parse. */
function jsonObjectAt(text: string, start: number): { value: Record<string, unknown>; end: number } | undefined {
  let depth = 0;
  let inString = false;
  const limit = Math.min(text.length, start + MAX_JSON_CHARS);
  for (let i = start; i < limit; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) {
      try {
        const value: unknown = JSON.parse(text.slice(start, i + 1));
        return value && typeof value === 'object' && !Array.isArray(value) ? { value: value as Record<string, unknown>, end: i + 1 } : undefined;
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** Every mention in `text`, in order of appearance; a mention inside another's arguments does not count. */
export function findToolMentions(text: string, names: Map<string, string>): ToolMention[] {
  const found: ToolMention[] = [];
  let reads = 0;
  for (const [spoken, tool] of names) {
    for (let at = text.indexOf(spoken); at !== -1 && reads < MAX_READS; at = text.indexOf(spoken, at + 1)) {
      if (at > 0 && NAME_CHAR.test(text[at - 1]!)) continue;
      let brace = at + spoken.length;
      while (brace < text.length && /\s/.test(text[brace]!)) brace++;
      if (text[brace] !== '{') continue;
      reads++;
      const json = jsonObjectAt(text, brace);
      if (json) found.push({ tool, args: json.value, start: at, end: json.end });
    }
  }
  found.sort((a, b) => a.start - b.start || b.end - a.end);
  const mentions: ToolMention[] = [];
  for (const mention of found) {
    if (mentions.length >= MAX_MENTIONS) break;
    if (mention.start >= (mentions.at(-1)?.end ?? 0)) mentions.push(mention);
  }
  return mentions;
}

/** The text with its mentions blanked out (so the arguments of a tool call are not taken for arithmetic). */
export function withoutMentions(text: string, mentions: ToolMention[]): string {
  let rest = text;
  for (const { start, end } of [...mentions].reverse()) rest = `${rest.slice(0, start)}${' '.repeat(end - start)}${rest.slice(end)}`;
  return rest;
}
