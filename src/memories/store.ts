import type { Knex } from 'knex';
import { vectorLiteral, type VectorPath, type VectorStore } from '../knowledge/vector-store.js';
import type { MemoryRow } from './records.js';

/** The columns a memory is read with. */
const COLUMNS = 'id, namespace, content, metadata, created_at, updated_at';
/**
 * pgvector: a user with at most this many memories is searched exactly (their rows by their index, distances in C,
 * about 2 ms for 5,000 here); the HNSW index serves users with more, where an exact search would grow with them.
 */
export const INDEX_MIN_MEMORIES = 5000;
/** `cube` holds at most 100 dimensions: its distance is computed in C, ten times faster than `kb_dot`'s unnest. */
const CUBE_MAX_DIMENSIONS = 100;

/** A memory's vector, as the deployment's memory embedding model made it. */
export interface MemoryVector {
  model: string;
  vector: number[];
}

/** Which of a user's memories a read covers: all, or some namespaces. */
export interface MemoryScope {
  userId: string;
  namespaces?: string[];
}

export interface VectorQuery extends MemoryVector {
  limit: number;
  offset?: number;
}

/** A dimension is spliced into SQL (a type modifier and an index predicate): only ever a positive integer. */
function dimensionsOf(vector: number[]): number {
  const n = vector.length;
  if (!Number.isInteger(n) || n < 1 || n > 16_000) throw new RangeError(`bad vector dimension ${n}`);
  return n;
}

/**
 * A memory, written only with a slot in the user's count (`memory_counts`, bounded by MEMORIES_PER_USER)
 * and only once per tool call key; `slotted`: whether the slot was taken (a key already written takes one too).
 */
const INSERT_MEMORY = `with slot as (
    insert into memory_counts as c (user_id, count) values (:user, 1)
    on conflict (user_id) do update set count = c.count + 1 where c.count < :limit
    returning 1
  ), written as (
    insert into memories (user_id, namespace, content, metadata, embedding_model, dimensions, embedding, tool_call_key)
    select :user, :namespace, :content, :metadata, :model, :dimensions, cast(:query as real[]), cast(:key as text) from slot
    on conflict (user_id, tool_call_key) where tool_call_key is not null do nothing
    returning ${COLUMNS}
  )
  select exists (select 1 from slot) as slotted, written.* from (select 1) as one left join written on true`;

export const hnswIndexName = (dimensions: number) => `memories_hnsw_${dimensions}`;

/**
 * Memories in Postgres (DESIGN §25): every statement is bounded by one user (its indexes lead with
 * `user_id`). The count bound is kept by `memory_counts` in the statement that writes. Search by
 * meaning is pgvector's cosine distance where the server has it (with an HNSW index per dimension,
 * built by `ensureIndex`), else an exact search of the user's memories.
 */
export class MemoryStore {
  /** `vectors`: the knowledge bases' vector store, whose detected path and index builds memories share. */
  constructor(
    private readonly knex: Knex,
    private readonly vectors: Pick<VectorStore, 'path' | 'buildIndex'>,
    /** `indexMinMemories`: INDEX_MIN_MEMORIES unless given. */
    private readonly settings: { perUser: number; efSearch: number; indexMinMemories?: number },
  ) {}

  path(): Promise<VectorPath> {
    return this.vectors.path();
  }

  /**
   * Adds a memory if the user has room for it; undefined when they have MEMORIES_PER_USER already.
   * With `toolCallKey` (DESIGN §28: the run's tool call that writes it) the memory is written once:
   * the call repeated by a later attempt gets the memory written the first time, and counts nothing.
   */
  async insert(userId: string, namespace: string, content: string, metadata: Record<string, unknown>, embedded: MemoryVector, toolCallKey: string | null = null): Promise<MemoryRow | undefined> {
    const bindings = { user: userId, limit: this.settings.perUser, namespace, content, metadata: JSON.stringify(metadata), key: toolCallKey, ...vectorBindings(embedded) };
    const write = async (db: Knex) => {
      const { slotted, ...row } = (await db.raw(INSERT_MEMORY, bindings)).rows[0] as MemoryRow & { slotted: boolean };
      return { slotted, row: row.id ? (row as MemoryRow) : undefined };
    };
    if (toolCallKey === null) return (await write(this.knex)).row;
    return this.knex.transaction(async (trx) => {
      const { slotted, row } = await write(trx);
      if (row) return row;
      // Written by an earlier attempt of the call: the slot this statement took for it (if any) is given back.
      if (slotted) await trx.raw('update memory_counts set count = count - 1 where user_id = ?', [userId]);
      const { rows } = await trx.raw(`select ${COLUMNS} from memories where user_id = ? and tool_call_key = ?`, [userId, toolCallKey]);
      return rows[0];
    });
  }

  async get(userId: string, id: string): Promise<MemoryRow | undefined> {
    const { rows } = await this.knex.raw(`select ${COLUMNS} from memories where id = ? and user_id = ?`, [id, userId]);
    return rows[0];
  }

  async update(userId: string, id: string, changes: { content?: string; metadata?: Record<string, unknown>; embedded?: MemoryVector }): Promise<MemoryRow | undefined> {
    const set: Record<string, unknown> = { updated_at: this.knex.fn.now() };
    if (changes.content !== undefined) set.content = changes.content;
    if (changes.metadata !== undefined) set.metadata = JSON.stringify(changes.metadata);
    if (changes.embedded) {
      set.embedding_model = changes.embedded.model;
      set.dimensions = dimensionsOf(changes.embedded.vector);
      set.embedding = this.knex.raw('cast(? as real[])', [vectorLiteral(changes.embedded.vector)]);
    }
    const [row] = await this.knex('memories').where({ id, user_id: userId }).update(set).returning(COLUMNS.split(', '));
    return row;
  }

  /** Deletes one memory, or every memory of a namespace; the user's count goes down in the same statement. */
  async remove(userId: string, which: { id: string } | { namespace: string }): Promise<number> {
    const [column, value] = 'id' in which ? ['id', which.id] : ['namespace', which.namespace];
    const { rows } = await this.knex.raw(
      `with gone as (delete from memories where user_id = :user and ${column} = :value returning 1),
            counted as (select count(*)::int as n from gone),
            _ as (update memory_counts set count = count - (select n from counted) where user_id = :user and (select n from counted) > 0)
       select n from counted`,
      { user: userId, value },
    );
    return rows[0].n;
  }

  /** Newest first. */
  async list(scope: MemoryScope, limit: number, offset: number): Promise<MemoryRow[]> {
    const { rows } = await this.knex.raw(
      `select ${COLUMNS} from memories where ${scopeSql(scope)} order by created_at desc, id desc limit :limit offset :offset`,
      { ...scopeBindings(scope), limit, offset },
    );
    return rows;
  }

  /** How many memories the scope holds: the user's count, or one index-only count of the namespaces. */
  async count(scope: MemoryScope): Promise<number> {
    if (!scope.namespaces) {
      const { rows } = await this.knex.raw('select count from memory_counts where user_id = ?', [scope.userId]);
      return rows[0]?.count ?? 0;
    }
    const { rows } = await this.knex.raw(`select count(*)::int as n from memories where ${scopeSql(scope)}`, scopeBindings(scope));
    return rows[0].n;
  }

  /** The user's namespaces with their counts, and the agent each is of (its name, unless it was deleted). */
  async namespaces(userId: string): Promise<{ namespace: string; agent_name: string | null; count: number }[]> {
    const { rows } = await this.knex.raw(
      `select m.namespace, a.name as agent_name, m.count from (
         select namespace, count(*)::int as count from memories where user_id = :user group by namespace
       ) m left join agents a on a.id::text = m.namespace and a.user_id = :user and a.deleted_at is null
       order by m.namespace = 'user' desc, a.name nulls last, m.namespace`,
      { user: userId },
    );
    return rows;
  }

  /**
   * The memories of the scope closest in meaning to the query vector, closest first, with their
   * cosine similarity as `score`. Only memories embedded by the query's model are compared.
   */
  async nearest(scope: MemoryScope, query: VectorQuery): Promise<MemoryRow[]> {
    const n = dimensionsOf(query.vector);
    const bindings = { ...scopeBindings(scope), ...vectorBindings(query), limit: query.limit, offset: query.offset ?? 0 };
    const where = `${scopeSql(scope)} and embedding_model = :model and dimensions = ${n}`;
    if ((await this.path()) === 'exact') {
      const similarity = n <= CUBE_MAX_DIMENSIONS
        ? '1 - power(cube(cast(embedding as float8[])) <-> cube(cast(:query as float8[])), 2) / 2'
        : 'kb_dot(embedding, cast(:query as real[]))';
      const { rows } = await this.knex.raw(`select ${COLUMNS}, ${similarity} as score from memories where ${where} order by score desc, id limit :limit offset :offset`, bindings);
      return rows;
    }
    // `cast(… as vector(n))`, never `::vector`: knex would read `:vector` as a named binding.
    const distance = `cast(embedding as vector(${n})) <=> cast(cast(:query as real[]) as vector(${n}))`;
    if ((await this.count({ userId: scope.userId })) <= (this.settings.indexMinMemories ?? INDEX_MIN_MEMORIES)) {
      // A user with few memories in a table of many: the shared index's walk would mostly meet others' rows and
      // return the user's far ones. Their own rows, read through their index, are exact and cheap.
      const { rows } = await this.knex.raw(
        `with mine as materialized (select ${COLUMNS}, embedding from memories where ${where})
         select ${COLUMNS}, 1 - (${distance}) as score from mine order by ${distance}, id limit :limit offset :offset`,
        bindings,
      );
      return rows;
    }
    return this.knex.transaction(async (trx) => {
      // Strict order: a filtered HNSW scan goes on until it has the rows asked for (pgvector ≥ 0.8; a no-op before).
      await trx.raw(`select set_config('hnsw.ef_search', ?, true), set_config('hnsw.iterative_scan', 'strict_order', true)`, [String(this.settings.efSearch)]);
      const { rows } = await trx.raw(`select ${COLUMNS}, 1 - (${distance}) as score from memories where ${where} order by ${distance}, id limit :limit offset :offset`, bindings);
      return rows;
    });
  }

  /**
   * pgvector only: the HNSW index of one dimension's memories, built once without blocking writes
   * (`concurrently`), under a session lock so two processes never build it at once. True when it exists.
   */
  async ensureIndex(dimensions: number): Promise<boolean> {
    if ((await this.path()) !== 'pgvector') return false;
    const n = dimensionsOf(new Array(dimensions).fill(0));
    return this.vectors.buildIndex(hnswIndexName(n), `on memories using hnsw ((embedding::vector(${n})) vector_cosine_ops) where dimensions = ${n}`);
  }
}

function scopeSql(scope: MemoryScope): string {
  return scope.namespaces ? 'user_id = :user and namespace = any(cast(:namespaces as text[]))' : 'user_id = :user';
}

function scopeBindings(scope: MemoryScope): Record<string, unknown> {
  return scope.namespaces ? { user: scope.userId, namespaces: `{${scope.namespaces.join(',')}}` } : { user: scope.userId };
}

function vectorBindings({ model, vector }: MemoryVector) {
  return { model, dimensions: dimensionsOf(vector), query: vectorLiteral(vector) };
}
