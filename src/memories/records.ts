import * as v from 'valibot';
import { count, described, instant, uuid } from '../shared/record-schemas.js';

/** Memories as the API shows and takes them (DESIGN §25). */

export const MEMORY_MAX_CHARS = 2000;
export const METADATA_MAX_BYTES = 16 * 1024;
/** The namespace every agent of the user reads; any other namespace is one agent's id. */
export const USER_NAMESPACE = 'user';

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value ?? null));

export const memoryContent = v.pipe(
  v.string('content must be a string'),
  v.trim(),
  v.minLength(1, 'content is empty'),
  v.maxLength(MEMORY_MAX_CHARS, `content is longer than ${MEMORY_MAX_CHARS} characters`),
);
export const memoryMetadata = v.pipe(
  v.unknown(),
  v.check((value) => typeof value === 'object' && value !== null && !Array.isArray(value), 'metadata must be a JSON object'),
  v.record(v.string(), v.unknown()),
  v.check((value) => jsonBytes(value) <= METADATA_MAX_BYTES, `metadata is over ${METADATA_MAX_BYTES} bytes as JSON`),
);
export const namespaceText = v.pipe(
  v.string(),
  v.trim(),
  v.check((value) => value === USER_NAMESPACE || /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value), `namespace is "${USER_NAMESPACE}" or the id of one of your agents`),
  v.toLowerCase(),
);

export const MemoryRecordSchema = v.strictObject({
  id: uuid,
  namespace: described(v.string(), `"${USER_NAMESPACE}" (all of the user's agents read it) or the id of the agent that remembers it`),
  content: v.string(),
  metadata: v.record(v.string(), v.unknown()),
  created_at: instant,
  updated_at: instant,
  score: v.optional(described(v.number(), 'With q: how close the memory is to q in meaning (cosine similarity; higher is closer)')),
});
export type MemoryRecord = v.InferOutput<typeof MemoryRecordSchema>;

export const NamespaceRecordSchema = v.strictObject({
  namespace: v.string(),
  agent_id: v.nullable(uuid),
  agent_name: described(v.nullable(v.string()), 'The agent whose namespace it is; null for "user", and for an agent deleted since'),
  count,
});
export const NamespacesSchema = v.strictObject({ items: v.array(NamespaceRecordSchema) });
export const DeletedSchema = v.strictObject({ deleted: count });

/** A memory's row as the store reads it. */
export interface MemoryRow {
  id: string;
  namespace: string;
  content: string;
  metadata: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
  score?: number | string;
}

export function presentMemory(row: MemoryRow): MemoryRecord {
  return {
    id: row.id,
    namespace: row.namespace,
    content: row.content,
    metadata: row.metadata,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    ...(row.score === undefined ? {} : { score: Number(row.score) }),
  };
}
