import type { Knex } from 'knex';

/**
 * Fewer indexes on `runs` (issue 36): every write that is not HOT inserts into each index, and a
 * run is written three times or more (queued, claimed, checkpoints, ended). Four indexes named
 * `status`; now two do (`runs_created` carries it for the usage sums).
 *
 * - `runs_active` (status, user_id), only the runs not final: a user's active or parked runs (the
 *   admin's cancel and counts, /v1 finding a parked run), the wake sweep's parked runs and the
 *   admin list filtered by an active status. It replaces `runs_user_id_status_index` (every
 *   run of every user), `runs_parked` and, for active statuses, `runs_status_created`. A run that
 *   ends leaves no new entry in it (a partial index takes only rows that match).
 * - The admin list by a final status walks `runs_created` by time instead of `runs_status_created`.
 * - fillfactor 85: a write that changes no indexed column (a checkpoint) finds room on the row's
 *   own page and is HOT; with full pages it moved the row and touched every index.
 */
const ACTIVE = `('queued', 'running', 'waiting', 'requires_action')`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create index runs_active on runs (status, user_id) where status in ${ACTIVE}`);
  await knex.raw('drop index runs_parked');
  await knex.raw('drop index runs_status_created');
  await knex.raw('drop index runs_user_id_status_index');
  await knex.raw('alter table runs set (fillfactor = 85)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table runs reset (fillfactor)');
  await knex.raw('create index runs_user_id_status_index on runs (user_id, status)');
  await knex.raw('create index runs_status_created on runs (status, created_at)');
  await knex.raw(`create index runs_parked on runs (user_id, id) where status in ('waiting', 'requires_action')`);
  await knex.raw('drop index runs_active');
}
