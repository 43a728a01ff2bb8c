import Router from '@koa/router';
import type { Context } from 'koa';
import * as v from 'valibot';
import type { Services } from '../services.js';
import { guard } from '../auth/guard.js';
import type { Principal } from '../auth/authenticator.js';
import { paginate } from '../http/pagination.js';
import { readSingleFile } from '../http/multipart.js';
import { paginationQuery, parseInput, uuidText, validateBody, validateParams, validateQuery } from '../http/validation.js';
import type { Upload } from '../knowledge/service.js';

const documentName = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(255));
const JsonDocument = v.strictObject({ name: documentName, content: v.pipe(v.string(), v.minLength(1)) });
const KbPath = v.object({ id: uuidText });
const DocumentPath = v.object({ id: uuidText, documentId: uuidText });

/** A document arrives as JSON `{name, content}` or as a multipart upload (one file; an optional `name` field). */
async function readUpload(ctx: Context, maxBytes: number): Promise<Upload> {
  if (ctx.is('multipart')) {
    const file = await readSingleFile(ctx, maxBytes);
    const { name } = parseInput(v.object({ name: documentName }), { name: file.fields.name || file.filename || '' }, 'body');
    return { name, bytes: file.bytes };
  }
  const body = validateBody(ctx, JsonDocument);
  return { name: body.name, bytes: Buffer.from(body.content, 'utf8') };
}

/** Documents of a knowledge base: full access; ingestion happens on a worker, never in the request. */
export function kbDocumentRoutes({ authenticator, knowledge, config }: Services): Router {
  const router = new Router({ prefix: '/api/knowledge-bases/:id/documents' });
  const read = guard(authenticator, {});
  const write = guard(authenticator, { writes: true });
  const userId = (state: Record<string, unknown>) => (state.principal as Principal).user.id;

  router.post('/', write, async (ctx) => {
    const { id } = validateParams(ctx, KbPath);
    // Ownership first: an unknown knowledge base answers 404 before the body is read.
    const kb = await knowledge.own(userId(ctx.state), id);
    const upload = await readUpload(ctx, config.kbDocumentMaxBytes);
    const { document, created } = await knowledge.addDocument(kb, upload);
    ctx.status = created ? 202 : 200;
    ctx.body = document.toPublic();
  });

  router.get('/', read, async (ctx) => {
    const { id } = validateParams(ctx, KbPath);
    const page = validateQuery(ctx, paginationQuery);
    await knowledge.own(userId(ctx.state), id);
    ctx.body = await paginate(knowledge.documents(id), page, (d) => d.toPublic());
  });

  router.delete('/:documentId', write, async (ctx) => {
    const { id, documentId } = validateParams(ctx, DocumentPath);
    await knowledge.removeDocument(userId(ctx.state), id, documentId);
    ctx.status = 204;
  });

  return router;
}
