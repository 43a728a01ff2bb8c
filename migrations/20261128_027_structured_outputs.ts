import type { Knex } from 'knex';

/**
 * Structured outputs (DESIGN §23). `agents.output_schema`: the JSON Schema its runs' answers
 * satisfy (versioned with the agent's other columns: agent_versions keeps each row's JSON).
 * `runs.output_format`: what the run itself was asked for (a native run's output_schema, or /v1's
 * response_format / text.format, json_object included), which overrides its agent's.
 * `runs.output`: the final answer parsed, once validated.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('agents', (t) => {
    t.jsonb('output_schema');
  });
  await knex.schema.alterTable('runs', (t) => {
    t.jsonb('output_format');
    t.jsonb('output');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.dropColumn('output');
    t.dropColumn('output_format');
  });
  await knex.schema.alterTable('agents', (t) => {
    t.dropColumn('output_schema');
  });
}
