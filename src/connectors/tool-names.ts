import { createHash } from 'node:crypto';

/**
 * How connector tools are named to models (DESIGN §8): `<connector name>__<tool name>`, within [A-Za-z0-9_-]{1,64}
 * (what every model API accepts for a function name). Pure functions; the web tier keeps prefixes unique per user,
 * the worker maps a model's call back to (connector, tool) through a ToolNameIndex.
 */

export const TOOL_NAME_MAX = 64;
export const SEPARATOR = '__';
const PREFIX_MAX = 32;

const shortHash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 8);

/** Accents folded, anything outside [A-Za-z0-9_-] replaced by "_", runs of "_" collapsed, none at the ends (agents' MCP tool names too). */
export function sanitize(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/[^A-Za-z0-9_-]/g, '_')
    .replace(/_+/g, '_')
    .replace(/^_|_$/g, '');
}

/** Cuts `text` to `max` characters, keeping it distinct from other long texts with a hash of the original. */
function fit(text: string, max: number, original: string): string {
  return text.length <= max ? text : `${text.slice(0, max - 9)}_${shortHash(original)}`;
}

/** The connector's name as it prefixes its tools: never empty, never containing the separator, at most 32 characters. */
export function toolPrefix(connectorName: string): string {
  const clean = sanitize(connectorName);
  return clean ? fit(clean, PREFIX_MAX, connectorName) : `connector_${shortHash(connectorName)}`;
}

/** The name a model sees for `tool` of the connector with this prefix (before collisions are settled by an index). */
export function exposedToolName(prefix: string, tool: string): string {
  const room = TOOL_NAME_MAX - prefix.length - SEPARATOR.length;
  const clean = sanitize(tool) || `tool_${shortHash(tool)}`;
  return `${prefix}${SEPARATOR}${fit(clean, room, tool)}`;
}

export interface ConnectorToolRef {
  connectorId: string;
  tool: string;
}

/** Both directions of the mapping for one run's connectors; names that collide after sanitising get a hash suffix. */
export class ToolNameIndex {
  private readonly byExposed = new Map<string, ConnectorToolRef>();
  private readonly byRef = new Map<string, string>();

  constructor(connectors: { connectorId: string; prefix: string; tools: string[] }[]) {
    for (const { connectorId, prefix, tools } of connectors) {
      for (const tool of tools) {
        let name = exposedToolName(prefix, tool);
        if (this.byExposed.has(name)) name = `${name.slice(0, TOOL_NAME_MAX - 9)}_${shortHash(`${connectorId}\u0000${tool}`)}`;
        if (this.byExposed.has(name)) continue;
        this.byExposed.set(name, { connectorId, tool });
        this.byRef.set(`${connectorId}\u0000${tool}`, name);
      }
    }
  }

  /** The (connector, tool) a model's call names, or undefined when it names no connector tool. */
  resolve(exposed: string): ConnectorToolRef | undefined {
    return this.byExposed.get(exposed);
  }

  nameOf(connectorId: string, tool: string): string | undefined {
    return this.byRef.get(`${connectorId}\u0000${tool}`);
  }

  get names(): string[] {
    return [...this.byExposed.keys()];
  }
}
