import type { QueryBuilder, Model } from 'objection';
import { pageOf, type Page, type Pagination } from '../shared/pages.js';

export { pageOf, type Page };

/** Runs a query one page at a time and wraps it in the spec's envelope. */
export async function paginate<M extends Model, T>(
  query: QueryBuilder<M, M[]>,
  pagination: Pagination,
  present: (row: M) => T,
): Promise<Page<T>> {
  const { results, total } = await query.page(pagination.page - 1, pagination.size);
  return pageOf(results.map(present), total, pagination);
}
