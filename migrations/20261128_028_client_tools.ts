import type { Knex } from 'knex';

/**
 * Client tools (DESIGN §23): a run carries the functions its client runs (`client_tools`) and,
 * parked as `requires_action`, the calls the client must answer (`required_action`). The partial
 * index of parked runs now covers both kinds of parking (the workers' wake sweep, and /v1 finding
 * a user's parked run by its call ids), keyed by user: it replaces runs_waiting, adding none.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.jsonb('client_tools').nullable();
    t.jsonb('required_action').nullable();
  });
  await knex.raw('alter table runs drop constraint runs_status_check');
  await knex.raw(`alter table runs add constraint runs_status_check check (status in ('queued', 'running', 'waiting', 'requires_action', 'succeeded', 'failed', 'cancelled', 'interrupted'))`);
  await knex.raw('drop index runs_waiting');
  await knex.raw(`create index runs_parked on runs (user_id, id) where status in ('waiting', 'requires_action')`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index runs_parked');
  await knex.raw(`create index runs_waiting on runs (id) where status = 'waiting'`);
  await knex.raw(`update runs set status = 'failed', error = '{"code":"client_tool_timeout","message":"migrated down while waiting for client tool outputs"}'::jsonb where status = 'requires_action'`);
  await knex.raw('alter table runs drop constraint runs_status_check');
  await knex.raw(`alter table runs add constraint runs_status_check check (status in ('queued', 'running', 'waiting', 'succeeded', 'failed', 'cancelled', 'interrupted'))`);
  await knex.schema.alterTable('runs', (t) => {
    t.dropColumn('required_action');
    t.dropColumn('client_tools');
  });
}
