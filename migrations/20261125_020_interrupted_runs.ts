import type { Knex } from 'knex';

/**
 * multitask_strategy `interrupt` (DESIGN §19): a run a newer one stopped ends `interrupted`, keeping
 * what it had said. Rolled-back runs end `cancelled`, as cancels do.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table runs drop constraint runs_status_check');
  await knex.raw(`alter table runs add constraint runs_status_check check (status in ('queued', 'running', 'waiting', 'succeeded', 'failed', 'cancelled', 'interrupted'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`update runs set status = 'cancelled' where status = 'interrupted'`);
  await knex.raw('alter table runs drop constraint runs_status_check');
  await knex.raw(`alter table runs add constraint runs_status_check check (status in ('queued', 'running', 'waiting', 'succeeded', 'failed', 'cancelled'))`);
}
