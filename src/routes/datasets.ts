import * as v from 'valibot';
import type { Services } from '../services.js';
import { route, type Route } from '../auth/route.js';
import { pageOf } from '../shared/record-schemas.js';
import { paginationQuery, uuidText } from '../http/validation.js';
import { DatasetItemRecordSchema, DatasetRecordSchema, ItemsAddedSchema, itemPatchSchema, newItemSchema } from '../evals/records.js';
import { readItems } from '../evals/item-upload.js';

const DatasetPath = v.object({ id: uuidText });
const ItemPath = v.object({ id: uuidText, itemId: uuidText });
const name = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(200));
const description = v.pipe(v.string(), v.maxLength(2000));
const CreateBody = v.strictObject({ name, description: v.optional(description) });
const UpdateBody = v.pipe(
  v.strictObject({ name: v.optional(name), description: v.optional(description) }),
  v.check((body) => Object.keys(body).length > 0, 'send at least one field to change'),
);
/** The JSON form of an items upload, for the document (JSONL and CSV bodies and multipart files are taken too). */
const ItemsBody = v.union([v.array(newItemSchema), v.strictObject({ items: v.array(newItemSchema) })]);

/** Datasets and their items (DESIGN §24): scope `chat`; another user's dataset answers 404. */
export function datasetRoutes({ datasets, config, cpu }: Services): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/datasets',
      summary: 'List your datasets, newest first',
      auth: { scope: 'chat' },
      responses: { 200: pageOf(DatasetRecordSchema) },
      query: paginationQuery,
      handle: ({ principal, query }) => datasets.list(principal.user.id, query),
    }),
    route({
      method: 'POST',
      path: '/api/datasets',
      summary: 'Create a dataset (add its items with POST /api/datasets/{id}/items)',
      auth: { scope: 'chat', writes: true },
      responses: { 201: DatasetRecordSchema },
      errors: [409],
      body: CreateBody,
      status: 201,
      handle: ({ principal, body }) => datasets.create(principal.user.id, body),
    }),
    route({
      method: 'GET',
      path: '/api/datasets/:id',
      summary: 'Read a dataset',
      auth: { scope: 'chat' },
      responses: { 200: DatasetRecordSchema },
      errors: [404],
      params: DatasetPath,
      handle: ({ principal, params }) => datasets.get(principal.user.id, params.id),
    }),
    route({
      method: 'PATCH',
      path: '/api/datasets/:id',
      summary: "Rename a dataset or change its description",
      auth: { scope: 'chat', writes: true },
      responses: { 200: DatasetRecordSchema },
      errors: [404],
      params: DatasetPath,
      body: UpdateBody,
      handle: ({ principal, params, body }) => datasets.update(principal.user.id, params.id, body),
    }),
    route({
      method: 'DELETE',
      path: '/api/datasets/:id',
      summary: 'Delete a dataset and its items; evals of it keep their copies and results',
      auth: { scope: 'chat', writes: true },
      responses: { 204: null },
      errors: [404],
      params: DatasetPath,
      status: 204,
      handle: ({ principal, params }) => datasets.remove(principal.user.id, params.id),
    }),
    route({
      method: 'POST',
      path: '/api/datasets/:id/items',
      summary: 'Add items: a JSON list (or {items}), JSONL (application/x-ndjson) or CSV (text/csv: q, expected, image_ids, other columns as metadata), or one such file as multipart; all or none',
      auth: { scope: 'chat', writes: true },
      upload: true,
      readsBody: true,
      responses: { 201: ItemsAddedSchema },
      errors: [404, 409, 413],
      params: DatasetPath,
      body: ItemsBody,
      status: 201,
      handle: async ({ principal, params, ctx }) => {
        // Ownership first: another user's dataset answers 404 before the items are read.
        await datasets.own(principal.user.id, params.id);
        const items = await readItems(ctx, cpu, { maxItems: config.evals.maxItems, maxUploadBytes: config.evals.uploadMaxBytes, idleMs: config.bodyIdleTimeoutMs });
        return datasets.addItems(principal.user.id, params.id, items);
      },
    }),
    route({
      method: 'GET',
      path: '/api/datasets/:id/items',
      summary: "A dataset's items, in the order they were added",
      auth: { scope: 'chat' },
      responses: { 200: pageOf(DatasetItemRecordSchema) },
      errors: [404],
      params: DatasetPath,
      query: paginationQuery,
      handle: ({ principal, params, query }) => datasets.listItems(principal.user.id, params.id, query),
    }),
    route({
      method: 'GET',
      path: '/api/datasets/:id/items/:itemId',
      summary: 'Read one item',
      auth: { scope: 'chat' },
      responses: { 200: DatasetItemRecordSchema },
      errors: [404],
      params: ItemPath,
      handle: ({ principal, params }) => datasets.getItem(principal.user.id, params.id, params.itemId),
    }),
    route({
      method: 'PATCH',
      path: '/api/datasets/:id/items/:itemId',
      summary: "Change an item's input, expected answer or metadata (evals already made keep their copy)",
      auth: { scope: 'chat', writes: true },
      responses: { 200: DatasetItemRecordSchema },
      errors: [404],
      params: ItemPath,
      body: itemPatchSchema,
      handle: ({ principal, params, body }) => datasets.updateItem(principal.user.id, params.id, params.itemId, body),
    }),
    route({
      method: 'DELETE',
      path: '/api/datasets/:id/items/:itemId',
      summary: 'Delete an item',
      auth: { scope: 'chat', writes: true },
      responses: { 204: null },
      errors: [404],
      params: ItemPath,
      status: 204,
      handle: ({ principal, params }) => datasets.removeItem(principal.user.id, params.id, params.itemId),
    }),
  ];
}
