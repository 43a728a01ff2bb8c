import type { Knex } from 'knex';

/**
 * Where a knowledge base's vectors are searched (DESIGN §14): `pgvector` when the server has the
 * extension (cosine distance in C; a partial HNSW index per large knowledge base and generation),
 * otherwise `exact`, a scan of the knowledge base's vectors in SQL (correct, linear in its size).
 */
export type VectorPath = 'pgvector' | 'exact';

export async function detectVectorPath(knex: Knex): Promise<VectorPath> {
  const { rows } = await knex.raw(`select 1 from pg_extension where extname = 'vector'`);
  return rows.length > 0 ? 'pgvector' : 'exact';
}

/** The vectors a search reads: one knowledge base's generation, all of one dimension. */
export interface VectorSet {
  knowledgeBaseId: string;
  generation: number;
  dimensions: number;
}

export interface VectorSettings {
  /** A generation this large gets an HNSW index (pgvector only); smaller ones are scanned exactly. */
  hnswMinVectors: number;
  /** HNSW candidate list per query: higher finds more of the true neighbours, slower. */
  efSearch: number;
  /** `maintenance_work_mem` of an index build: the graph is built much faster when it fits. */
  buildMemoryMb: number;
}

/** An index build may take long on a large knowledge base; it holds no lock that blocks writers. */
const INDEX_BUILD_TIMEOUT_MS = 6 * 3600 * 1000;

export interface Neighbour {
  id: string;
  similarity: number;
}

/** Vectors are written as `real[]` literals bound as parameters, never spliced into SQL. */
export const vectorLiteral = (vector: number[]) => `{${vector.map((x) => (Number.isFinite(x) ? x : 0)).join(',')}}`;

/** An index name per knowledge base and generation, so each can be found, built and dropped on its own. */
export const hnswIndexName = (knowledgeBaseId: string, generation: number) => `kb_vectors_hnsw_${knowledgeBaseId.replaceAll('-', '')}_${generation}`;

/** A dimension is spliced into SQL as a type modifier (it cannot be a parameter): only ever an integer. */
function typmod(dimensions: number): number {
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > 16_000) throw new RangeError(`bad vector dimension ${dimensions}`);
  return dimensions;
}

export class VectorStore {
  private detected?: Promise<VectorPath>;

  /** `path` is detected from the server on first use unless given. */
  constructor(
    private readonly knex: Knex,
    private readonly settings: VectorSettings,
    path?: VectorPath,
  ) {
    if (path) this.detected = Promise.resolve(path);
  }

  path(): Promise<VectorPath> {
    this.detected ??= detectVectorPath(this.knex).catch((err: unknown) => {
      this.detected = undefined;
      throw err;
    });
    return this.detected;
  }

  /** The `limit` nearest vectors of the set to `query` (unit vectors: similarity = cosine). */
  async nearest(set: VectorSet, query: number[], limit: number, options: { exact?: boolean } = {}): Promise<Neighbour[]> {
    const bindings = { kb: set.knowledgeBaseId, generation: set.generation, query: vectorLiteral(query), limit };
    if ((await this.path()) === 'exact') {
      const { rows } = await this.knex.raw(
        `select chunk_id::text as id, kb_dot(embedding, cast(:query as real[])) as similarity from kb_vectors
         where knowledge_base_id = :kb and generation = :generation order by similarity desc, chunk_id limit :limit`,
        bindings,
      );
      return rows.map(neighbour);
    }
    const n = typmod(set.dimensions);
    const sql = `select chunk_id::text as id, 1 - (embedding::vector(${n}) <=> cast(cast(:query as real[]) as vector(${n}))) as similarity from kb_vectors
       where knowledge_base_id = :kb and generation = :generation order by embedding::vector(${n}) <=> cast(cast(:query as real[]) as vector(${n})) limit :limit`;
    if (options.exact) {
      return this.knex.transaction(async (trx) => {
        await trx.raw('set local enable_indexscan = off');
        return (await trx.raw(sql, bindings)).rows.map(neighbour);
      });
    }
    return this.knex.transaction(async (trx) => {
      await trx.raw(`select set_config('hnsw.ef_search', ?, true)`, [String(this.settings.efSearch)]);
      return (await trx.raw(sql, bindings)).rows.map(neighbour);
    });
  }

  /**
   * Stores one vector per chunk in the generation; a chunk that has one already, or that was
   * deleted meanwhile (a re-embedding outside ingestion's transaction), is skipped.
   */
  async insert(trx: Knex | Knex.Transaction, set: Omit<VectorSet, 'dimensions'>, chunkIds: string[], vectors: number[][]): Promise<void> {
    if (chunkIds.length === 0) return;
    await trx.raw(
      `insert into kb_vectors (knowledge_base_id, generation, chunk_id, embedding)
       select ?, ?, t.chunk_id, t.embedding::real[] from unnest(?::bigint[], ?::text[]) as t(chunk_id, embedding)
       where exists (select 1 from kb_chunks c where c.id = t.chunk_id)
       on conflict do nothing`,
      [set.knowledgeBaseId, set.generation, chunkIds, vectors.map(vectorLiteral)],
    );
  }

  /**
   * Builds the generation's HNSW index once it holds `hnswMinVectors` (pgvector only), without
   * blocking writes (`concurrently`). True when the index exists afterwards.
   */
  async ensureIndex(set: VectorSet): Promise<boolean> {
    if ((await this.path()) !== 'pgvector') return false;
    const name = hnswIndexName(set.knowledgeBaseId, set.generation);
    if (await this.indexExists(name)) return true;
    const { rows } = await this.knex.raw(
      `select count(*)::int as n from kb_vectors where knowledge_base_id = ? and generation = ?`,
      [set.knowledgeBaseId, set.generation],
    );
    if (rows[0].n < this.settings.hnswMinVectors) return false;
    const n = typmod(set.dimensions);
    return this.buildIndex(name, `on kb_vectors using hnsw ((embedding::vector(${n})) vector_cosine_ops)
       where knowledge_base_id = '${uuid(set.knowledgeBaseId)}' and generation = ${Number(set.generation)}`);
  }

  /**
   * Builds the index `name` (`create index concurrently <name> <definition>`) unless it exists, on a
   * connection of its own: outside any transaction (it must be), with room to build the graph in
   * memory (`maintenance_work_mem`), no client-side time limit, and a session lock so two processes
   * never build the same index at once. True when the index exists afterwards. `definition` is
   * spliced into SQL: only ever the caller's own text, never input.
   */
  async buildIndex(name: string, definition: string): Promise<boolean> {
    const connection = await this.knex.client.acquireConnection();
    const run = (text: string) => connection.query({ text, query_timeout: INDEX_BUILD_TIMEOUT_MS });
    try {
      const { rows } = await run(`select pg_try_advisory_lock(hashtext('${name}')) as locked`);
      if (!rows[0].locked) return false;
      try {
        // On the held connection: a pool of one (PGlite) has no other to lend.
        const found = await run(`select i.indisvalid from pg_class c join pg_index i on i.indexrelid = c.oid where c.relname = '${name}'`);
        if (found.rows[0]?.indisvalid === true) return true;
        await run(`set maintenance_work_mem = '${Math.floor(this.settings.buildMemoryMb)}MB'`);
        // A failed concurrent build leaves an invalid index behind: drop it before trying again.
        await run(`drop index concurrently if exists ${name}`);
        await run(`create index concurrently ${name} ${definition}`);
      } finally {
        await run('reset maintenance_work_mem');
        await run(`select pg_advisory_unlock(hashtext('${name}'))`);
      }
    } finally {
      await this.knex.client.releaseConnection(connection);
    }
    return this.indexExists(name);
  }

  /** Drops the knowledge base's HNSW indexes, all of them or all but one generation's. */
  async dropIndexes(knowledgeBaseId: string, keepGeneration?: number): Promise<void> {
    if ((await this.path()) !== 'pgvector') return;
    const prefix = hnswIndexName(knowledgeBaseId, 0).replace(/0$/, '');
    const { rows } = await this.knex.raw(`select indexname from pg_indexes where tablename = 'kb_vectors' and starts_with(indexname, ?)`, [prefix]);
    for (const { indexname } of rows as { indexname: string }[]) {
      if (keepGeneration !== undefined && indexname === hnswIndexName(knowledgeBaseId, keepGeneration)) continue;
      await this.knex.raw(`drop index concurrently if exists ${indexname}`);
    }
  }

  private async indexExists(name: string): Promise<boolean> {
    const { rows } = await this.knex.raw(
      `select i.indisvalid from pg_class c join pg_index i on i.indexrelid = c.oid where c.relname = ?`,
      [name],
    );
    return rows.length > 0 && rows[0].indisvalid === true;
  }
}

const neighbour = (row: { id: string; similarity: number | string }): Neighbour => ({ id: row.id, similarity: Number(row.similarity) });

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
function uuid(value: string): string {
  if (!UUID.test(value)) throw new RangeError('not a uuid');
  return value;
}
