import type { Knex } from 'knex';
import { ConflictError, NotFoundError } from '../shared/errors.js';
import { pageOf, type Page, type Pagination } from '../shared/pages.js';
import { EmbeddingError, type Embedder } from '../knowledge/embedders.js';
import { gatewayRefusal } from '../knowledge/service.js';
import { presentMemory, USER_NAMESPACE, type MemoryRecord } from './records.js';
import type { MemoryScope, MemoryStore, MemoryVector } from './store.js';

export interface MemorySettings {
  /** MEMORIES_PER_USER. */
  perUser: number;
  /** MEMORY_RECALL_K: memories a run is given before it starts, and the recall tool returns. */
  recallK: number;
}

export interface NamespaceView {
  namespace: string;
  agent_id: string | null;
  agent_name: string | null;
  count: number;
}

/** The namespaces an agent's runs read: its own, and the one all of the user's agents share. */
export const agentNamespaces = (agentId: string) => [agentId, USER_NAMESPACE];

/**
 * A user's memories (DESIGN §25), for the API and for runs' tools alike: embedded by the
 * deployment's memory model when written, searched by meaning, each user's own (another user's
 * memory answers 404), at most MEMORIES_PER_USER.
 */
export class MemoryService {
  constructor(
    private readonly knex: Knex,
    private readonly store: MemoryStore,
    private readonly embedder: Embedder,
    readonly settings: MemorySettings,
  ) {}

  /** Newest first; with `q`, closest in meaning first, each with its score. */
  async list(userId: string, filter: { namespace?: string; q?: string }, page: Pagination): Promise<Page<MemoryRecord>> {
    const scope: MemoryScope = { userId, ...(filter.namespace ? { namespaces: [filter.namespace] } : {}) };
    const offset = (page.page - 1) * page.size;
    const [rows, total] = await Promise.all([
      filter.q ? this.embed(filter.q).then((query) => this.store.nearest(scope, { ...query, limit: page.size, offset })) : this.store.list(scope, page.size, offset),
      this.store.count(scope),
    ]);
    return pageOf(rows.map(presentMemory), total, page);
  }

  async namespaces(userId: string): Promise<{ items: NamespaceView[] }> {
    const rows = await this.store.namespaces(userId);
    return { items: rows.map(({ namespace, agent_name, count }) => ({ namespace, agent_id: namespace === USER_NAMESPACE ? null : namespace, agent_name, count })) };
  }

  async get(userId: string, id: string): Promise<MemoryRecord> {
    return presentMemory(found(await this.store.get(userId, id)));
  }

  /** An agent's namespace must be one of the user's agents (404 otherwise, as for any other reference to it). */
  async create(userId: string, input: { namespace: string; content: string; metadata?: Record<string, unknown> | null }): Promise<MemoryRecord> {
    if (input.namespace !== USER_NAMESPACE) await this.requireAgent(userId, input.namespace);
    return this.add(userId, input.namespace, input.content, input.metadata ?? {});
  }

  async update(userId: string, id: string, changes: { content?: string; metadata?: Record<string, unknown> | null }): Promise<MemoryRecord> {
    // Another user's memory is 404 before its content is embedded.
    const current = found(await this.store.get(userId, id));
    const embedded = changes.content !== undefined && changes.content !== current.content ? await this.embed(changes.content) : undefined;
    const metadata = changes.metadata === null ? {} : changes.metadata;
    return presentMemory(found(await this.store.update(userId, id, { content: changes.content, metadata, embedded })));
  }

  async remove(userId: string, id: string): Promise<void> {
    if ((await this.store.remove(userId, { id })) === 0) throw notFound();
  }

  async removeNamespace(userId: string, namespace: string): Promise<{ deleted: number }> {
    return { deleted: await this.store.remove(userId, { namespace }) };
  }

  /** The `remember` tool: a memory in the agent's own namespace, once per `toolCallKey` (the run's call, DESIGN §28). */
  remember(userId: string, agentId: string, content: string, toolCallKey: string | null = null): Promise<MemoryRecord> {
    return this.add(userId, agentId, content, {}, toolCallKey);
  }

  /** What an agent's run recalls: the memories of its namespaces closest to `query`, closest first. */
  async recall(userId: string, agentId: string, query: string, limit = this.settings.recallK, signal?: AbortSignal): Promise<MemoryRecord[]> {
    const rows = await this.store.nearest({ userId, namespaces: agentNamespaces(agentId) }, { ...(await this.embed(query, signal)), limit });
    return rows.map(presentMemory);
  }

  /**
   * Where the server has pgvector, the HNSW index of the memory model's vectors (built once, without
   * blocking writes); the model's dimension is learnt from one embedding. False on the exact path.
   */
  async ensureIndex(): Promise<boolean> {
    if ((await this.store.path()) !== 'pgvector') return false;
    const { vector } = await this.embed('dimension probe');
    return this.store.ensureIndex(vector.length);
  }

  private async add(userId: string, namespace: string, content: string, metadata: Record<string, unknown>, toolCallKey: string | null = null): Promise<MemoryRecord> {
    const row = await this.store.insert(userId, namespace, content, metadata, await this.embed(content), toolCallKey);
    if (!row) throw new ConflictError('memory_limit', `You have ${this.settings.perUser} memories, the most kept per user (MEMORIES_PER_USER); delete some to make room`);
    return presentMemory(row);
  }

  private async embed(text: string, signal?: AbortSignal): Promise<MemoryVector> {
    try {
      const [vector] = await this.embedder.embed([text], signal);
      return { model: this.embedder.model, vector: vector! };
    } catch (err) {
      throw err instanceof EmbeddingError ? gatewayRefusal(err) : err;
    }
  }

  private async requireAgent(userId: string, agentId: string): Promise<void> {
    const agent = await this.knex('agents').where({ id: agentId, user_id: userId }).whereNull('deleted_at').first('id');
    if (!agent) throw new NotFoundError('Agent not found', 'Agent');
  }
}

const notFound = () => new NotFoundError('Memory not found', 'Memory');

function found<T>(row: T | undefined): T {
  if (!row) throw notFound();
  return row;
}
