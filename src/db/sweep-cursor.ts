import type { Knex } from 'knex';

/**
 * Where a periodic sweep over a table left off (a keyset on `id`): each call reads the next batch
 * after the last id it saw, and after the last row it starts again from the first. A sweep that
 * read only the first batch every time would never look at the rows beyond it.
 */
export class SweepCursor {
  private after: string | null = null;

  constructor(readonly batch: number) {}

  /** The next batch of `query`'s rows (it selects `id` among its columns), in id order. */
  async next<Row extends { id: string }>(query: Knex.QueryBuilder): Promise<Row[]> {
    if (this.after !== null) query.where('id', '>', this.after);
    const rows: Row[] = await query.orderBy('id').limit(this.batch);
    this.after = rows.length < this.batch ? null : rows.at(-1)!.id;
    return rows;
  }
}
