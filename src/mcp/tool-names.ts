/**
 * How agents are named as MCP tools (DESIGN §16): the agent's name folded into `^[A-Za-z0-9_-]{1,64}$`.
 * Names that fold alike are told apart by a suffix from the agent's id, deterministically: the oldest
 * agent keeps the plain name, so creating an agent never renames an existing tool, and the suffixed
 * name of an agent stays callable however the others change.
 */

import { sanitize } from '../connectors/tool-names.js';

export const MCP_TOOL_NAME_MAX = 64;
/** `_` and the first 8 hex digits of the agent's id. */
const SUFFIX_LENGTH = 9;


const hex = (id: string) => id.replace(/-/g, '').toLowerCase();

export interface NamedAgent {
  id: string;
  name: string;
  created_at: Date;
}

/** The agent's name as a tool name before collisions: never empty, at most 64 characters. */
export function plainToolName(agent: Pick<NamedAgent, 'id' | 'name'>): string {
  return sanitize(agent.name).slice(0, MCP_TOOL_NAME_MAX) || `agent_${hex(agent.id).slice(0, 8)}`;
}

/** The name with the id's suffix, used when another agent's name folds alike. `long`: the whole id (a suffixed name was taken too). */
export function suffixedToolName(agent: Pick<NamedAgent, 'id' | 'name'>, long = false): string {
  const suffix = `_${long ? hex(agent.id) : hex(agent.id).slice(0, SUFFIX_LENGTH - 1)}`;
  return `${plainToolName(agent).slice(0, MCP_TOOL_NAME_MAX - suffix.length)}${suffix}`;
}

/** Tool name ↔ agent for one caller's agents, in both directions. */
export class AgentToolNames<A extends NamedAgent> {
  private readonly byName = new Map<string, A>();
  private readonly byId = new Map<string, string>();

  constructor(agents: readonly A[]) {
    // Oldest first: it keeps the plain name.
    const ordered = [...agents].sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || a.id.localeCompare(b.id));
    for (const agent of ordered) {
      const name = [plainToolName(agent), suffixedToolName(agent), suffixedToolName(agent, true)].find((candidate) => !this.byName.has(candidate));
      if (name === undefined) continue; // Two agents with one id: cannot happen.
      this.byName.set(name, agent);
      this.byId.set(agent.id, name);
    }
  }

  nameOf(agent: Pick<A, 'id'>): string | undefined {
    return this.byId.get(agent.id);
  }

  /** The agent a tool name names: its current name, or its suffixed form (a name a client saw while another agent collided). */
  resolve(name: string): A | undefined {
    const current = this.byName.get(name);
    if (current) return current;
    for (const agent of this.byName.values()) {
      if (suffixedToolName(agent) === name || suffixedToolName(agent, true) === name) return agent;
    }
    return undefined;
  }

  get entries(): [string, A][] {
    return [...this.byName.entries()];
  }
}
