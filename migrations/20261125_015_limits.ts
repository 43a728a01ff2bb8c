import type { Knex } from 'knex';

/**
 * Limits (DESIGN §18) on API keys and users:
 *
 * - `rate_limit_rpm`: requests per minute, 1–100,000, or null (none of its own: the user's, else
 *   DEFAULT_RATE_LIMIT_RPM). A user's caps each of its keys; a JWT is counted against its user's.
 * - `token_budget`: `{limit, period: "day" | "month"}` or null: the model tokens the key's (or the
 *   user's) runs may use per UTC calendar period. The counters live in Redis (src/budgets/ledger.ts).
 *
 * The checks repeat the API's validation, so no other writer can store a limit the API would refuse.
 */
const TABLES = ['api_keys', 'users'] as const;

export async function up(knex: Knex): Promise<void> {
  for (const table of TABLES) {
    await knex.schema.alterTable(table, (t) => {
      t.integer('rate_limit_rpm');
      t.jsonb('token_budget');
    });
    await knex.raw(`alter table ?? add constraint ?? check (rate_limit_rpm between 1 and 100000)`, [table, `${table}_rate_limit_rpm_range`]);
    await knex.raw(
      `alter table ?? add constraint ?? check (
         token_budget is null or (
           jsonb_typeof(token_budget) = 'object'
           and jsonb_typeof(token_budget -> 'limit') = 'number'
           and (token_budget ->> 'limit')::numeric between 1 and 1000000000000
           and token_budget ->> 'period' in ('day', 'month')
         )
       )`,
      [table, `${table}_token_budget_shape`],
    );
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of TABLES) {
    await knex.schema.alterTable(table, (t) => {
      t.dropColumn('token_budget');
      t.dropColumn('rate_limit_rpm');
    });
  }
}
