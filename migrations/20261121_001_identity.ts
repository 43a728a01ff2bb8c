import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('users', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('email').notNullable();
    t.text('name').notNullable().defaultTo('');
    t.text('role').notNullable().defaultTo('member');
    t.text('password_hash').notNullable();
    t.timestamps(true, true);
    t.check(`role in ('admin', 'member', 'restricted')`, [], 'users_role_check');
  });
  await knex.raw('create unique index users_email_lower_unique on users (lower(email))');

  await knex.schema.createTable('refresh_tokens', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.uuid('family_id').notNullable().index();
    t.text('token_hash').notNullable().unique();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true });
    t.timestamp('revoked_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('api_keys', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('key_prefix').notNullable();
    t.text('key_hash').notNullable().unique();
    t.text('scopes');
    t.boolean('is_active').notNullable().defaultTo(true);
    t.timestamp('expires_at', { useTz: true });
    t.timestamp('last_used_at', { useTz: true });
    t.bigInteger('total_requests').notNullable().defaultTo(0);
    t.timestamps(true, true);
    t.index(['user_id', 'created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('api_keys');
  await knex.schema.dropTable('refresh_tokens');
  await knex.schema.dropTable('users');
}
