import type { Knex } from 'knex';

/**
 * Tool approval (DESIGN §11): an agent names the tools a person must approve; a run waiting for
 * that approval is `waiting` (no worker, no lock: its checkpoint holds its state).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('agents', (t) => t.jsonb('tool_approval').notNullable().defaultTo(JSON.stringify('never')));
  await knex.raw('alter table runs drop constraint runs_status_check');
  await knex.raw(`alter table runs add constraint runs_status_check check (status in ('queued', 'running', 'waiting', 'succeeded', 'failed', 'cancelled'))`);
  // The workers' sweep for parked runs whose decisions are in reads only these.
  await knex.raw(`create index runs_waiting on runs (id) where status = 'waiting'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index runs_waiting');
  await knex.raw('alter table runs drop constraint runs_status_check');
  await knex.raw(`alter table runs add constraint runs_status_check check (status in ('queued', 'running', 'succeeded', 'failed', 'cancelled'))`);
  await knex.schema.alterTable('agents', (t) => t.dropColumn('tool_approval'));
}
