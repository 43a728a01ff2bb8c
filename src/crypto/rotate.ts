import type { Knex } from 'knex';

const ROTATE_BATCH = 200;

/**
 * Walks every row of `table` in id order and rewrites, each row locked, the columns `reseal`
 * returns for it (undefined: nothing stale). Batched, safe to run again. The rotation behind
 * `agentctl secrets:rotate`: a value neither key opens stops it with an error naming the row.
 */
export async function resealRows<R extends { id: string }>(
  knex: Knex,
  table: string,
  columns: string[],
  reseal: (row: R) => { patch: Record<string, unknown>; count: number } | undefined,
): Promise<{ checked: number; resealed: number }> {
  let after = '00000000-0000-0000-0000-000000000000';
  let checked = 0;
  let resealed = 0;
  for (;;) {
    const ids: string[] = (await knex(table).select('id').where('id', '>', after).orderBy('id').limit(ROTATE_BATCH)).map((r) => r.id);
    if (ids.length === 0) break;
    for (const id of ids) {
      checked += 1;
      resealed += await knex
        .transaction(async (trx) => {
          const row = (await trx(table).select('id', ...columns).where({ id }).forUpdate().first()) as R | undefined;
          const change = row && reseal(row);
          if (!change) return 0;
          await trx(table).where({ id }).update(change.patch);
          return change.count;
        })
        .catch((err: Error) => {
          throw new Error(`${table} ${id}: ${err.message}`);
        });
    }
    after = ids.at(-1)!;
  }
  return { checked, resealed };
}
