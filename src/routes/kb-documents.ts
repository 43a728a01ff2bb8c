import * as v from 'valibot';
import type { Services } from '../services.js';
import { Reply, route, type AppContext, type Route } from '../auth/route.js';
import { DocumentRecordSchema, presentDocument } from '../knowledge/records.js';
import { pageOf } from '../shared/record-schemas.js';
import { readSingleFile } from '../http/multipart.js';
import { paginationQuery, parseInput, uuidText, validateBody } from '../http/validation.js';
import type { Upload } from '../knowledge/service.js';

const documentName = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(255));
const JsonDocument = v.strictObject({ name: documentName, content: v.pipe(v.string(), v.minLength(1)) });
const KbPath = v.object({ id: uuidText });
const DocumentPath = v.object({ id: uuidText, documentId: uuidText });

/** A document arrives as JSON `{name, content}` or as a multipart upload (one file; an optional `name` field). */
async function readUpload(ctx: AppContext, maxBytes: number, idleMs: number): Promise<Upload> {
  if (ctx.is('multipart')) {
    const file = await readSingleFile(ctx, maxBytes, { noun: 'document', idleMs });
    const { name } = parseInput(v.object({ name: documentName }), { name: file.fields.name || file.filename || '' }, 'body');
    return { name, bytes: file.bytes };
  }
  const body = validateBody(ctx, JsonDocument);
  return { name: body.name, bytes: Buffer.from(body.content, 'utf8') };
}

/** Documents of a knowledge base: full access; ingestion happens on a worker, never in the request. */
export function kbDocumentRoutes({ knowledge, config }: Services): Route[] {
  return [
    route({
      method: 'POST',
      path: '/api/knowledge-bases/:id/documents',
      summary: 'Add a document (JSON {name, content} or a multipart upload of one .txt, .md, .html, .pdf or .docx file); ingested by a worker',
      auth: { writes: true },
      upload: true,
      responses: { 202: DocumentRecordSchema, 200: DocumentRecordSchema },
      errors: [415],
      params: KbPath,
      body: JsonDocument,
      readsBody: true,
      handle: async ({ principal, params, ctx }) => {
        // Ownership first: an unknown knowledge base answers 404 before the body is read.
        const kb = await knowledge.own(principal.user.id, params.id);
        const { document, created } = await knowledge.addDocument(kb, await readUpload(ctx, config.kbDocumentMaxBytes, config.bodyIdleTimeoutMs));
        return new Reply(created ? 202 : 200, presentDocument(document));
      },
    }),
    route({
      method: 'GET',
      path: '/api/knowledge-bases/:id/documents',
      summary: "List a knowledge base's documents",
      auth: {},
      responses: { 200: pageOf(DocumentRecordSchema) },
      params: KbPath,
      query: paginationQuery,
      handle: ({ principal, params, query }) => knowledge.listDocuments(principal.user.id, params.id, query),
    }),
    route({
      method: 'GET',
      path: '/api/knowledge-bases/:id/documents/:documentId',
      summary: 'Read one document and its ingestion status (processing, ready or failed with its error)',
      auth: {},
      responses: { 200: DocumentRecordSchema },
      params: DocumentPath,
      handle: ({ principal, params }) => knowledge.document(principal.user.id, params.id, params.documentId),
    }),
    route({
      method: 'DELETE',
      path: '/api/knowledge-bases/:id/documents/:documentId',
      summary: 'Delete a document and its chunks',
      auth: { writes: true },
      responses: { 204: null },
      params: DocumentPath,
      status: 204,
      handle: ({ principal, params }) => knowledge.removeDocument(principal.user.id, params.id, params.documentId),
    }),
  ];
}
