import type { Model } from 'objection';
import { NotFoundError } from '../shared/errors.js';
import { paginate, type Page } from './pagination.js';
import type { Pagination } from '../shared/pages.js';

/** Every resource belongs to a user (DESIGN §3): another user's answers 404, never its data. */

/** Whether the model's rows are soft-deleted (a static `softDeleted`, as agents'): a deleted one is gone to its owner. */
const softDeleted = (model: typeof Model) => (model as { softDeleted?: boolean }).softDeleted === true;

/** The user's resource, or 404 naming what was looked for (also when it was soft-deleted). */
export async function findOwned<C extends typeof Model>(model: C, userId: string, id: string, what: string): Promise<InstanceType<C>> {
  const query = model.query().findOne({ id, user_id: userId });
  if (softDeleted(model)) query.whereNull('deleted_at');
  const found = await query;
  if (!found) throw new NotFoundError(`${what} not found`, what);
  return found as InstanceType<C>;
}

/** One page of the user's resources, newest (by `orderBy`) first, in the spec's envelope. */
export function listOwned<C extends typeof Model, T>(model: C, userId: string, page: Pagination, present: (row: InstanceType<C>) => T, orderBy = 'created_at'): Promise<Page<T>> {
  const query = model.query().where({ user_id: userId }).orderBy([{ column: orderBy, order: 'desc' }, 'id']);
  if (softDeleted(model)) query.whereNull('deleted_at');
  return paginate(query, page, (row) => present(row as InstanceType<C>));
}
