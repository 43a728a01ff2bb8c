/** A page of a list as the spec shapes it, apart from HTTP (the audit log and the CLI page too). */

/** Which page of a list, counted from 1, of `size` items. */
export interface Pagination {
  page: number;
  size: number;
}

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
