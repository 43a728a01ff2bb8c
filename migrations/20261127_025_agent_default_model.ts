import type { Knex } from 'knex';

/**
 * An agent's `model` may be null: it then follows the deployment's default model when each run
 * starts (DESIGN §17), so connecting a real model later moves such agents to it. Agents saved
 * before with `local` got it as the default of their save (the console's empty Model field and an
 * API create without one stored it), so they follow the default from now on. An agent given a
 * gateway model keeps it: the migration cannot tell a chosen one from a default. Earlier versions
 * in `agent_versions` are history and keep what they stored.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table agents alter column model drop not null, alter column model drop default');
  await knex.raw(`update agents set model = null where model = 'local'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`update agents set model = 'local' where model is null`);
  await knex.raw('alter table agents alter column model set not null, alter column model set default \'local\'');
}
