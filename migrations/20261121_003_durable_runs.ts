import type { Knex } from 'knex';

/**
 * Durable runs: the loop's checkpoint, and the counters that tell a resumed job from a crash loop.
 * `attempt` is also the fencing token: only the job holding the newest attempt may write.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.jsonb('checkpoint');
    t.integer('attempt').notNullable().defaultTo(0);
    t.integer('crashes').notNullable().defaultTo(0);
    t.boolean('handed_back').notNullable().defaultTo(false);
    t.index(['user_id', 'created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.dropIndex(['user_id', 'created_at']);
    t.dropColumns('checkpoint', 'attempt', 'crashes', 'handed_back');
  });
}
