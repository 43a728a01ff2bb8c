import type { Knex } from 'knex';

/**
 * Files and images (DESIGN §15). A file's record, its bytes per variant (`original`, and `model`:
 * the copy a model is sent when the original is larger than IMAGE_MAX_SIDE) and each user's bytes
 * in use, kept by the statement that adds or removes a file so the quota check reads one row.
 * Messages keep what they were sent with as `attachments` (id, name, type, size), so deleting a
 * file leaves its name in history.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('files', (t) => {
    t.uuid('id').primary();
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('filename').notNullable();
    t.text('content_type').notNullable();
    t.bigInteger('size_bytes').notNullable();
    t.integer('width').notNullable();
    t.integer('height').notNullable();
    t.text('sha256').notNullable();
    // {max_side, content_type, width, height, size_bytes} of the `model` variant; null when the original is sent as it is.
    t.jsonb('rendition');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['user_id', 'created_at', 'id']);
  });
  await knex.schema.createTable('file_blobs', (t) => {
    t.uuid('file_id').notNullable().references('files.id').onDelete('CASCADE');
    t.text('variant').notNullable();
    // Base64 (src/files/storage.ts says why).
    t.text('base64').notNullable();
    t.primary(['file_id', 'variant']);
  });
  // The images are already compressed: Postgres's own compression would only spend CPU.
  await knex.raw(`alter table file_blobs alter column base64 set storage external`);
  await knex.schema.createTable('file_usage', (t) => {
    t.uuid('user_id').primary().references('users.id').onDelete('CASCADE');
    t.bigInteger('bytes').notNullable().defaultTo(0);
  });
  await knex.schema.alterTable('messages', (t) => t.jsonb('attachments'));
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('messages', (t) => t.dropColumn('attachments'));
  await knex.schema.dropTable('file_usage');
  await knex.schema.dropTable('file_blobs');
  await knex.schema.dropTable('files');
}
