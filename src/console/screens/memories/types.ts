import type { operations } from '../../api/schema';

/** Memories (DESIGN §25) as the generated client types them. */
type Json<O, S extends number> = O extends { responses: Record<S, { content: { 'application/json': infer T } }> } ? T : never;

export type Memory = Json<operations['getApiMemoriesId'], 200>;
export type MemoryPage = Json<operations['getApiMemories'], 200>;
export type Namespace = Json<operations['getApiMemoryNamespaces'], 200>['items'][number];

/** The namespace every agent of the user reads; any other is one agent's id. */
export const USER_NAMESPACE = 'user';
/** The API's longest memory (src/memories/records.ts): the form counts toward it but lets the API refuse past it. */
export const MEMORY_MAX_CHARS = 2000;

export const shortId = (id: string) => id.slice(0, 8);

/** "1 memory", "3 memories". */
export const memories = (n: number) => `${n.toLocaleString()} ${n === 1 ? 'memory' : 'memories'}`;

/** A cosine similarity as the list shows it. */
export const scoreText = (score: number) => score.toFixed(3);

/**
 * Names namespaces for people: `user` is all of the user's agents; an agent's id is its name, from the
 * namespaces the API listed or the user's agents, or "Deleted agent" when neither has it.
 */
export function namespaceNamer(namespaces: Namespace[] | undefined, agents: { id: string; name: string }[] | undefined): (namespace: string) => string {
  return (namespace) => {
    if (namespace === USER_NAMESPACE) return 'All agents (user)';
    const name = namespaces?.find((n) => n.namespace === namespace)?.agent_name ?? agents?.find((a) => a.id === namespace)?.name;
    if (name) return name;
    // Until the agents are loaded, an agent without memories is not known to be deleted.
    return agents ? `Deleted agent ${shortId(namespace)}` : `Agent ${shortId(namespace)}`;
  };
}
