import type { Model } from 'objection';
import { NotFoundError } from '../shared/errors.js';
import { paginate, type Page } from '../http/pagination.js';
import type { Pagination } from '../http/validation.js';

/** Every resource belongs to a user (DESIGN §3): another user's answers 404, never its data. */

/** The user's resource, or 404 naming what was looked for. */
export async function findOwned<C extends typeof Model>(model: C, userId: string, id: string, what: string): Promise<InstanceType<C>> {
  const found = await model.query().findOne({ id, user_id: userId });
  if (!found) throw new NotFoundError(`${what} not found`, what);
  return found as InstanceType<C>;
}

/** One page of the user's resources, newest (by `orderBy`) first, in the spec's envelope. */
export function listOwned<C extends typeof Model, T>(model: C, userId: string, page: Pagination, present: (row: InstanceType<C>) => T, orderBy = 'created_at'): Promise<Page<T>> {
  const query = model.query().where({ user_id: userId }).orderBy([{ column: orderBy, order: 'desc' }, 'id']);
  return paginate(query, page, (row) => present(row as InstanceType<C>));
}
