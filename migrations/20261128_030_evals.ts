import type { Knex } from 'knex';

/**
 * Evals (DESIGN §24): datasets of questions with what a good answer holds, and eval runs of an
 * agent's version over one. An eval copies its dataset's items when it is created (`eval_items`):
 * editing or deleting the dataset later changes no eval, and two evals of the same dataset are
 * compared item by item (`item_id`). `evals.dataset_id` has no foreign key for that reason.
 *
 * An eval item moves pending → running (its run's id is written before the run starts, so a driver
 * that died in between finds it) → scored | failed | cancelled. Scoring is a conditional update from
 * `running`: an item is scored once, whichever driver gets there.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('datasets', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('description').notNullable().defaultTo('');
    t.integer('item_count').notNullable().defaultTo(0);
    t.timestamps(true, true);
  });
  await knex.raw('create index datasets_user_created on datasets (user_id, created_at desc)');
  await knex.schema.createTable('dataset_items', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('dataset_id').notNullable().references('datasets.id').onDelete('CASCADE');
    t.bigIncrements('position', { primaryKey: false });
    t.jsonb('input').notNullable();
    t.jsonb('expected');
    t.jsonb('metadata').notNullable().defaultTo('{}');
    t.timestamps(true, true);
  });
  await knex.raw('create index dataset_items_dataset_position on dataset_items (dataset_id, position)');

  await knex.schema.createTable('evals', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.uuid('dataset_id').notNullable();
    t.uuid('agent_id').notNullable();
    t.integer('agent_version').notNullable();
    t.text('mode').notNullable();
    t.jsonb('scorers').notNullable();
    t.integer('concurrency').notNullable();
    t.text('status').notNullable().defaultTo('queued');
    t.integer('total').notNullable();
    t.integer('done').notNullable().defaultTo(0);
    t.integer('failed_items').notNullable().defaultTo(0);
    t.integer('passed_items').notNullable().defaultTo(0);
    // Each scorer's sum over the items done: its mean is the sum over `done`, kept as items finish.
    t.jsonb('score_sums').notNullable().defaultTo('{}');
    t.jsonb('error');
    t.jsonb('budgets').notNullable().defaultTo('[]');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('started_at', { useTz: true });
    t.timestamp('finished_at', { useTz: true });
    t.check(`status in ('queued', 'running', 'succeeded', 'failed', 'cancelled')`, [], 'evals_status_check');
    t.check(`mode in ('react', 'dag')`, [], 'evals_mode_check');
  });
  await knex.raw('create index evals_user_created on evals (user_id, created_at desc)');
  // The active-eval bound per user, and the sweep that re-queues an active eval whose driver job was lost.
  await knex.raw(`create index evals_active on evals (user_id) where status in ('queued', 'running')`);

  await knex.schema.createTable('eval_items', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('eval_id').notNullable().references('evals.id').onDelete('CASCADE');
    t.uuid('item_id').notNullable();
    t.bigInteger('position').notNullable();
    t.jsonb('input').notNullable();
    t.jsonb('expected');
    t.text('status').notNullable().defaultTo('pending');
    t.uuid('run_id');
    t.text('output');
    t.jsonb('scores');
    t.boolean('passed');
    t.jsonb('error');
    t.timestamp('started_at', { useTz: true });
    t.timestamp('finished_at', { useTz: true });
    t.check(`status in ('pending', 'running', 'scored', 'failed', 'cancelled')`, [], 'eval_items_status_check');
  });
  // Results in dataset order, the next pending item, the running ones (the concurrency bound), the comparison's join.
  await knex.raw('create unique index eval_items_eval_position on eval_items (eval_id, position)');
  await knex.raw(`create index eval_items_open on eval_items (eval_id, status, position) where status in ('pending', 'running')`);
  await knex.raw('create index eval_items_eval_item on eval_items (eval_id, item_id)');

  await knex.schema.alterTable('runs', (t) => {
    t.uuid('eval_id').references('evals.id').onDelete('SET NULL');
  });
  // An eval's runs (admin views, its results' join); partial, so runs outside evals cost it nothing.
  await knex.raw('create index runs_eval on runs (eval_id) where eval_id is not null');
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.uuid('eval_id').references('evals.id').onDelete('SET NULL');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => t.dropColumn('eval_id'));
  await knex.schema.alterTable('runs', (t) => t.dropColumn('eval_id'));
  await knex.schema.dropTable('eval_items');
  await knex.schema.dropTable('evals');
  await knex.schema.dropTable('dataset_items');
  await knex.schema.dropTable('datasets');
}
