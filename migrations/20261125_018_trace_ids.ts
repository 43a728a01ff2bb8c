import type { Knex } from 'knex';

/**
 * Traces (DESIGN §18): a run records the OpenTelemetry trace its spans belong to (the request that
 * started it, the worker's attempts, model and tool calls), so an operator can go from a run to its
 * trace. Null when tracing is off.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.text('trace_id');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.dropColumn('trace_id');
  });
}
