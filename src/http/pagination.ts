import type { QueryBuilder, Model } from 'objection';
import type { Pagination } from './validation.js';

export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  size: number;
  pages: number;
}

/** The spec's page envelope around one page of items. */
export function pageOf<T>(items: T[], total: number, { page, size }: Pagination): Page<T> {
  return { items, total, page, size, pages: Math.ceil(total / size) };
}

/** Runs a query one page at a time and wraps it in the spec's envelope. */
export async function paginate<M extends Model, T>(
  query: QueryBuilder<M, M[]>,
  pagination: Pagination,
  present: (row: M) => T,
): Promise<Page<T>> {
  const { results, total } = await query.page(pagination.page - 1, pagination.size);
  return pageOf(results.map(present), total, pagination);
}
