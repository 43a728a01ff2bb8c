import * as v from 'valibot';
import contentDisposition from 'content-disposition';
import type { Services } from '../services.js';
import { Reply, route, type Route } from '../auth/route.js';
import { FileRecordSchema, presentFile } from '../files/records.js';
import { pageOf } from '../shared/record-schemas.js';
import { readSingleFile } from '../http/multipart.js';
import { paginationQuery, uuidText } from '../http/validation.js';
import { UnsupportedMediaTypeError } from '../shared/errors.js';

const FilePath = v.object({ id: uuidText });

/** The name for clients that read only `filename=`: ASCII (accents dropped, the rest as `_`); `filename*` carries the real one. */
const asciiName = (name: string) => name.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').replace(/[^\x20-\x7e]/g, '_');
const attachment = (name: string) => contentDisposition(name, { fallback: asciiName(name) });

/** Files (DESIGN §15): images a user uploads to show models. Scope `chat` (runs attach them); owner only. */
export function fileRoutes({ files, config }: Services): Route[] {
  return [
    route({
      method: 'POST',
      path: '/api/files',
      summary: 'Upload an image (multipart/form-data, one part `file`): PNG, JPEG, WebP or GIF, the type read from its bytes',
      auth: { scope: 'chat' },
      upload: true,
      readsBody: true,
      status: 201,
      responses: { 201: FileRecordSchema },
      errors: [413, 415],
      handle: async ({ principal, ctx }) => {
        if (!ctx.is('multipart')) throw new UnsupportedMediaTypeError('Send the image as multipart/form-data with one part named "file"');
        const file = await files.upload(principal.user.id, async () => {
          const upload = await readSingleFile(ctx, files.maxUploadBytes, { field: 'file', noun: 'file', idleMs: config.bodyIdleTimeoutMs });
          return { filename: upload.filename, bytes: upload.bytes };
        });
        return presentFile(file);
      },
    }),
    route({
      method: 'GET',
      path: '/api/files',
      summary: 'List your files, newest first',
      auth: { scope: 'chat' },
      responses: { 200: pageOf(FileRecordSchema) },
      query: paginationQuery,
      handle: ({ principal, query }) => files.list(principal.user.id, query),
    }),
    route({
      method: 'GET',
      path: '/api/files/:id',
      summary: "A file's record",
      auth: { scope: 'chat' },
      responses: { 200: FileRecordSchema },
      params: FilePath,
      handle: async ({ principal, params }) => presentFile(await files.own(principal.user.id, params.id)),
    }),
    route({
      method: 'GET',
      path: '/api/files/:id/content',
      summary: "A file's bytes, as an attachment of its detected type",
      auth: { scope: 'chat' },
      responses: { 200: { mediaType: 'image/*', description: 'The image as uploaded' } },
      responseHeaders: { 'Content-Disposition': 'attachment, with the file name' },
      params: FilePath,
      handle: async ({ principal, params }) => {
        const { file, bytes } = await files.content(principal.user.id, params.id);
        return new Reply(200, bytes, { 'Content-Type': file.content_type, 'Content-Disposition': attachment(file.filename), ETag: `"${file.sha256}"` });
      },
    }),
    route({
      method: 'DELETE',
      path: '/api/files/:id',
      summary: 'Delete a file; messages that showed it keep its name, marked deleted',
      auth: { scope: 'chat' },
      responses: { 204: null },
      params: FilePath,
      status: 204,
      handle: ({ principal, params }) => files.remove(principal.user.id, params.id),
    }),
  ];
}
