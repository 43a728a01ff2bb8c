import * as v from 'valibot';
import type { Services } from '../services.js';
import { route, type Route } from '../auth/route.js';
import { pageOf } from '../shared/record-schemas.js';
import { ensureOutputSchemas, paginationQuery, uuidText } from '../http/validation.js';
import { RUN_MODES } from '../shared/run-statuses.js';
import { EVAL_CONCURRENCY_MAX, EvalComparisonSchema, EvalRecordSchema, EvalResultSchema } from '../evals/records.js';
import { scorersSchema } from '../evals/scorers.js';

const EvalPath = v.object({ id: uuidText });
const CreateBody = v.strictObject({
  dataset_id: uuidText,
  agent_id: uuidText,
  agent_version: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  mode: v.optional(v.picklist(RUN_MODES), 'react'),
  scorers: scorersSchema,
  concurrency: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1, 'concurrency is 1 to 20'), v.maxValue(EVAL_CONCURRENCY_MAX, 'concurrency is 1 to 20')), 4),
});
const ListQuery = v.object({ ...paginationQuery.entries, dataset_id: v.optional(uuidText), agent_id: v.optional(uuidText) });
const CompareQuery = v.object({ a: uuidText, b: uuidText });

/**
 * Evals (DESIGN §24): an agent's version run over a dataset, each item an ordinary background run
 * carrying `eval_id`, scored as it ends. Scope `chat`; another user's eval answers 404.
 */
export function evalRoutes({ evals, cpu }: Services): Route[] {
  return [
    route({
      method: 'POST',
      path: '/api/evals',
      summary: "Run an agent's version over a dataset and score each answer; 202 at once, follow its progress with GET",
      auth: { scope: 'chat', writes: true },
      responses: { 202: EvalRecordSchema },
      responseHeaders: { Location: 'The eval: GET it for its progress and summary' },
      errors: [404, 429],
      body: CreateBody,
      status: 202,
      handle: async ({ principal, body, ctx }) => {
        await ensureOutputSchemas(cpu, body.scorers.map((scorer, i) => [['scorers', i, 'schema'], scorer.type === 'json_schema' ? scorer.schema : null]));
        const created = await evals.create(principal.user.id, body, principal.budgets);
        ctx.set('Location', `/api/evals/${created.id}`);
        return created;
      },
    }),
    route({
      method: 'GET',
      path: '/api/evals',
      summary: 'List your evals, newest first (filter by dataset_id or agent_id)',
      auth: { scope: 'chat' },
      responses: { 200: pageOf(EvalRecordSchema) },
      query: ListQuery,
      handle: ({ principal, query }) => evals.list(principal.user.id, query, query),
    }),
    // Before /:id, so "compare" is not read as an id.
    route({
      method: 'GET',
      path: '/api/evals/compare',
      summary: 'Two evals of the same dataset side by side: each scorer’s means, and per item a’s wins, losses and ties against b',
      auth: { scope: 'chat' },
      responses: { 200: EvalComparisonSchema },
      errors: [404],
      query: CompareQuery,
      handle: ({ principal, query }) => evals.compare(principal.user.id, query.a, query.b),
    }),
    route({
      method: 'GET',
      path: '/api/evals/:id',
      summary: "Read an eval: status, progress, each scorer's mean so far",
      auth: { scope: 'chat' },
      responses: { 200: EvalRecordSchema },
      errors: [404],
      params: EvalPath,
      handle: ({ principal, params }) => evals.get(principal.user.id, params.id),
    }),
    route({
      method: 'GET',
      path: '/api/evals/:id/results',
      summary: 'Per item, in dataset order: its run, the answer, each score (0..1) and whether it passed',
      auth: { scope: 'chat' },
      responses: { 200: pageOf(EvalResultSchema) },
      errors: [404],
      params: EvalPath,
      query: paginationQuery,
      handle: ({ principal, params, query }) => evals.results(principal.user.id, params.id, query),
    }),
    route({
      method: 'POST',
      path: '/api/evals/:id/cancel',
      summary: 'Cancel an eval: no item starts after this, and the runs of running items are cancelled',
      auth: { scope: 'chat', writes: true },
      responses: { 202: EvalRecordSchema },
      errors: [404, 409],
      params: EvalPath,
      status: 202,
      handle: ({ principal, params }) => evals.cancel(principal.user.id, params.id),
    }),
  ];
}
