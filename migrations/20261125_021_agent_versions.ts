import type { Knex } from 'knex';

/**
 * Agents change and are versioned (DESIGN §20). `agents.version` is the current version; every
 * version's configuration (the agent's fields of creation: every column but its identity, owner,
 * version and timestamps) is kept in `agent_versions`, written with the change that makes it. A run
 * records the version it started with (`runs.agent_version`), and its worker reads that version's
 * snapshot, also when it resumes after a crash. Existing agents become version 1; existing runs keep
 * no version (their worker reads the live agent, as before).
 *
 * `agents.deleted_at`: DELETE is a soft delete, so the runs and conversations that name the agent
 * keep their `agent_id` and running ones finish on their snapshot.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('agents', (t) => {
    t.integer('version').notNullable().defaultTo(1);
    t.timestamp('deleted_at', { useTz: true });
  });
  await knex.schema.createTable('agent_versions', (t) => {
    t.uuid('agent_id').notNullable().references('agents.id').onDelete('CASCADE');
    t.integer('version').notNullable();
    t.jsonb('config').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['agent_id', 'version']);
  });
  await knex.raw(
    `insert into agent_versions (agent_id, version, config, created_at)
     select a.id, 1, to_jsonb(a) - array['id', 'user_id', 'version', 'created_at', 'updated_at', 'deleted_at'], a.updated_at from agents a`,
  );
  await knex.schema.alterTable('runs', (t) => {
    t.integer('agent_version');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.dropColumn('agent_version');
  });
  await knex.schema.dropTable('agent_versions');
  // Deleted agents would come back without the column that hides them.
  await knex.raw('delete from agents where deleted_at is not null');
  await knex.schema.alterTable('agents', (t) => {
    t.dropColumn('deleted_at');
    t.dropColumn('version');
  });
}
