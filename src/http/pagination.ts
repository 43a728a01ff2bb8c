import type { QueryBuilder, Model } from 'objection';
import type { Pagination } from './validation.js';

export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  size: number;
  pages: number;
}

/** Runs a query one page at a time and wraps it in the spec's envelope. */
export async function paginate<M extends Model, T>(
  query: QueryBuilder<M, M[]>,
  { page, size }: Pagination,
  present: (row: M) => T,
): Promise<Page<T>> {
  const { results, total } = await query.page(page - 1, size);
  return { items: results.map(present), total, page, size, pages: Math.ceil(total / size) };
}
