import type { Knex } from 'knex';

/** What the tests that hold statements to constant cost share: recording them as they run, and reading their plans. */

export interface Recorded {
  sql: string;
  bindings: unknown[];
}

export function record(knex: Knex, into: Recorded[]): void {
  knex.on('query', (q: { sql: string; bindings?: unknown[] }) => into.push({ sql: q.sql, bindings: q.bindings ?? [] }));
}

/** Every table a plan reads with a sequential scan. */
export function seqScans(plan: unknown, found: string[] = []): string[] {
  if (Array.isArray(plan)) for (const item of plan) seqScans(item, found);
  else if (plan && typeof plan === 'object') {
    const node = plan as Record<string, unknown>;
    if (node['Node Type'] === 'Seq Scan') found.push(String(node['Relation Name']));
    for (const value of Object.values(node)) if (value && typeof value === 'object') seqScans(value, found);
  }
  return found;
}

/** The statements whose plans scan a table sequentially, with those tables. */
export async function sequentialScans(knex: Knex, statements: Iterable<Recorded>): Promise<{ sql: string; tables: string[] }[]> {
  const scanned: { sql: string; tables: string[] }[] = [];
  const connection = await knex.client.acquireConnection();
  try {
    for (const { sql, bindings } of statements) {
      // The query event carries some statements with ? placeholders and some already numbered ($1).
      const native = /\$\d/.test(sql) ? { sql, bindings } : knex.raw(sql, bindings as Knex.RawBinding[]).toSQL().toNative();
      const { rows } = await connection.query(`explain (format json) ${native.sql}`, native.bindings);
      const tables = seqScans(rows[0]['QUERY PLAN']);
      if (tables.length > 0) scanned.push({ sql, tables });
    }
  } finally {
    await knex.client.releaseConnection(connection);
  }
  return scanned;
}
