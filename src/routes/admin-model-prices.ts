import * as v from 'valibot';
import type { Services } from '../services.js';
import { Reply, route, type Route } from '../auth/route.js';
import { pageOf } from '../shared/record-schemas.js';
import { ADMIN } from '../auth/guard.js';
import { actorOf } from '../auth/actor.js';
import { decimal, paginationQuery } from '../http/validation.js';
import { MODEL_NAME, MODEL_NAME_RULE } from '../shared/model-settings.js';
import { ModelPriceSchema } from '../admin/records.js';

/** Prices are per million tokens, in the operator's one currency. */
const MAX_PRICE = 1_000_000;

/**
 * A model name as agents name it. Koa's router decodes the path segment, so a name with a slash
 * (`openai/gpt-4o`) is sent as `openai%2Fgpt-4o`.
 */
const ModelPath = v.object({
  model: v.pipe(
    v.string(),
    v.maxLength(200),
    v.regex(MODEL_NAME, MODEL_NAME_RULE),
    v.description('The model name exactly as agents name it (case-sensitive); a "/" in it is sent as %2F'),
  ),
});

const price = (what: string) => v.pipe(decimal(0, MAX_PRICE), v.description(`What a million ${what} tokens cost (0 to ${MAX_PRICE.toLocaleString('en')})`));
const PriceBody = v.strictObject({ input_per_million: price('input (prompt)'), output_per_million: price('output (completion, reasoning included)') });

/** What models cost, for administrators (DESIGN §18): runs that end later carry their `cost`. */
export function adminModelPriceRoutes({ modelPrices }: Services): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/admin/model-prices',
      summary: 'List model prices, by model name',
      auth: ADMIN,
      responses: { 200: pageOf(ModelPriceSchema) },
      query: paginationQuery,
      handle: ({ query }) => modelPrices.list(query),
    }),
    route({
      method: 'GET',
      path: '/api/admin/model-prices/:model',
      summary: "Read a model's price",
      auth: ADMIN,
      responses: { 200: ModelPriceSchema },
      params: ModelPath,
      handle: ({ params }) => modelPrices.get(params.model),
    }),
    route({
      method: 'PUT',
      path: '/api/admin/model-prices/:model',
      summary: "Set a model's price per million input and output tokens (201 when new, 200 when replaced); runs that end afterwards are costed at it",
      auth: ADMIN,
      responses: { 200: ModelPriceSchema, 201: ModelPriceSchema },
      params: ModelPath,
      body: PriceBody,
      handle: async ({ params, body, principal, ctx }) => {
        const { price, created } = await modelPrices.set(params.model, body, actorOf(principal, ctx));
        return created ? new Reply(201, price) : price;
      },
    }),
    route({
      method: 'DELETE',
      path: '/api/admin/model-prices/:model',
      summary: "Remove a model's price: runs of it that end afterwards have no cost (null)",
      auth: ADMIN,
      responses: { 204: null },
      params: ModelPath,
      status: 204,
      handle: ({ params, principal, ctx }) => modelPrices.remove(params.model, actorOf(principal, ctx)),
    }),
  ];
}
