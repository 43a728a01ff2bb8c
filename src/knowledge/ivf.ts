import type { Knex } from 'knex';
import { cubeLiteral, EMBEDDING_DIMENSIONS } from './embedding.js';

/**
 * An inverted-file (IVF) index for semantic search on large knowledge bases, in Postgres: the
 * embeddings are clustered (spherical k-means on a sample) into cells; each chunk records its
 * nearest centroid; a query scans only the cells of its nearest centroids. Small knowledge bases
 * (and chunks ingested since the last training) are scanned exactly.
 */
export const ANN_PROBES = 24;
const SAMPLE = 4096;
const ITERATIONS = 8;

export interface AnnSettings {
  /** A knowledge base gets cells once it holds this many chunks (retrained each time it doubles). */
  minChunks: number;
}

export const parseCube = (text: string): number[] => text.replace(/[()\s]/g, '').split(',').map(Number);

const dot = (a: number[], b: number[]) => {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
};

function normalise(vector: number[]): number[] {
  const norm = Math.hypot(...vector);
  return norm > 0 ? vector.map((x) => x / norm) : vector;
}

/** The index of the centroid nearest to `vector` (unit vectors: largest dot product). */
export function nearest(centroids: number[][], vector: number[]): number {
  let best = 0;
  let bestScore = -Infinity;
  for (const [i, centroid] of centroids.entries()) {
    const score = dot(centroid, vector);
    if (score > bestScore) [best, bestScore] = [i, score];
  }
  return best;
}

/** Spherical k-means (Lloyd's iterations on unit vectors), seeded with evenly spaced samples. */
export function kMeans(samples: number[][], k: number, iterations = ITERATIONS): number[][] {
  let centroids = Array.from({ length: k }, (_, i) => samples[Math.floor((i * samples.length) / k)]!);
  for (let round = 0; round < iterations; round++) {
    const sums = Array.from({ length: k }, () => new Array<number>(EMBEDDING_DIMENSIONS).fill(0));
    const counts = new Array<number>(k).fill(0);
    for (const sample of samples) {
      const cell = nearest(centroids, sample);
      counts[cell]! += 1;
      const sum = sums[cell]!;
      for (let d = 0; d < sample.length; d++) sum[d]! += sample[d]!;
    }
    centroids = sums.map((sum, i) => (counts[i] ? normalise(sum) : centroids[i]!));
  }
  return centroids;
}

export const cellCount = (chunks: number) => Math.max(16, Math.min(1024, Math.round(Math.sqrt(chunks))));

const ASSIGN_BATCH = 5000;

/**
 * Serialises a knowledge base's training against its ingestions: training takes the lock
 * exclusively, each ingestion shares it, so no chunk is ever assigned by centroids that are
 * being replaced.
 */
export async function lockCells(trx: Knex.Transaction, knowledgeBaseId: string, mode: 'exclusive' | 'shared'): Promise<void> {
  const fn = mode === 'exclusive' ? 'pg_advisory_xact_lock' : 'pg_advisory_xact_lock_shared';
  await trx.raw(`select ${fn}(hashtext(?))`, [`kb-cells:${knowledgeBaseId}`]);
}

/** Assigns every chunk of the knowledge base to its nearest centroid, a batch at a time, in order of id. */
async function assignCells(trx: Knex.Transaction, knowledgeBaseId: string, centroids: number[][]): Promise<void> {
  for (let after = 0; ; ) {
    const rows: { id: string; embedding: string }[] = await trx('kb_chunks')
      .select('id', trx.raw('embedding::text as embedding'))
      .where({ knowledge_base_id: knowledgeBaseId })
      .where('id', '>', after)
      .orderBy('id')
      .limit(ASSIGN_BATCH);
    if (rows.length === 0) return;
    const cells = rows.map((row) => nearest(centroids, parseCube(row.embedding)));
    await trx.raw(
      'update kb_chunks c set cell = v.cell from unnest(?::bigint[], ?::int[]) as v(id, cell) where c.id = v.id',
      [rows.map((row) => row.id), cells],
    );
    after = Number(rows.at(-1)!.id);
  }
}

/** Trains the knowledge base's cells when it has grown past the threshold (or doubled since); true when it did. */
const isDue = (kb: { total_chunks: number; ann_trained_chunks: number } | undefined, settings: AnnSettings) =>
  kb !== undefined && kb.total_chunks >= settings.minChunks && kb.total_chunks >= 2 * kb.ann_trained_chunks;

const countsOf = (knex: Knex | Knex.Transaction, knowledgeBaseId: string) =>
  knex('knowledge_bases').select('total_chunks', 'ann_trained_chunks').where({ id: knowledgeBaseId }).first();

export async function trainIfDue(knex: Knex, knowledgeBaseId: string, settings: AnnSettings): Promise<boolean> {
  // Checked without the lock first: after almost every ingestion nothing is due, and taking the
  // exclusive lock would wait for (and hold up) the knowledge base's other ingestions.
  if (!isDue(await countsOf(knex, knowledgeBaseId), settings)) return false;
  const trained = await train(knex, knowledgeBaseId, settings);
  // Every chunk row was rewritten: reclaim the old versions now, or every scan reads them too.
  if (trained) await knex.raw('vacuum (analyze) kb_chunks');
  return trained;
}

async function train(knex: Knex, knowledgeBaseId: string, settings: AnnSettings): Promise<boolean> {
  return knex.transaction(async (trx) => {
    await lockCells(trx, knowledgeBaseId, 'exclusive');
    const kb = await countsOf(trx, knowledgeBaseId);
    if (!isDue(kb, settings)) return false;
    const rows: { embedding: string }[] = await trx('kb_chunks').select(trx.raw('embedding::text as embedding')).where({ knowledge_base_id: knowledgeBaseId }).orderByRaw('random()').limit(SAMPLE);
    const samples = rows.map((row) => parseCube(row.embedding)).filter((v) => v.some((x) => x !== 0));
    if (samples.length === 0) return false;
    const centroids = kMeans(samples, Math.min(cellCount(kb.total_chunks), samples.length));
    await trx('kb_centroids').where({ knowledge_base_id: knowledgeBaseId }).delete();
    await trx('kb_centroids').insert(centroids.map((centroid, cell) => ({ knowledge_base_id: knowledgeBaseId, cell, centroid: cubeLiteral(centroid) })));
    await assignCells(trx, knowledgeBaseId, centroids);
    await trx('knowledge_bases').update({ ann_trained_chunks: kb.total_chunks }).where({ id: knowledgeBaseId });
    return true;
  });
}

/** The knowledge base's centroids (empty before its first training), for assigning new chunks. */
export async function loadCentroids(knex: Knex | Knex.Transaction, knowledgeBaseId: string): Promise<number[][]> {
  const rows: { centroid: string }[] = await knex('kb_centroids').select(knex.raw('centroid::text as centroid')).where({ knowledge_base_id: knowledgeBaseId }).orderBy('cell');
  return rows.map((row) => parseCube(row.centroid));
}
