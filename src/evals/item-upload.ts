import type { AppContext } from '../http/context.js';
import { readSingleFile } from '../http/multipart.js';
import { ValidationError } from '../shared/errors.js';
import type { ItemFormat, ItemRows } from './item-parse.js';

/**
 * Dataset items arrive as a JSON list (or `{items: [...]}`), as JSONL (one item per line), or as
 * CSV with a header row (`q`, optional `expected` and `image_ids`; every other column becomes
 * metadata), in the body or as a multipart upload of one file. Each bad item is named by its index.
 * The body reader leaves the bytes (src/app.ts): they are decoded and parsed with the rest, in the CPU pool.
 */

const refuse = (msg: string, loc: (string | number)[] = ['body'], type = 'value_error') => new ValidationError([{ loc, msg, type, input: null }]);
const FORMATS_SAID = 'send the items as a JSON list, JSONL (application/x-ndjson, or a .jsonl file) or CSV (text/csv, or a .csv file)';

const JSONL_TYPES = ['application/x-ndjson', 'application/jsonl', 'application/x-jsonlines', 'application/json-lines', 'text/jsonl'];

function formatOfType(contentType: string): ItemFormat | undefined {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (JSONL_TYPES.includes(type)) return 'jsonl';
  if (type === 'text/csv' || type === 'application/csv') return 'csv';
  if (type === 'application/json' || type.endsWith('+json')) return 'json';
  return undefined;
}

function formatOfName(name: string): ItemFormat | undefined {
  const extension = /\.([a-z]+)$/i.exec(name)?.[1]?.toLowerCase();
  if (extension === 'jsonl' || extension === 'ndjson') return 'jsonl';
  if (extension === 'csv') return 'csv';
  if (extension === 'json') return 'json';
  return undefined;
}

/** The request's items, validated, as the rows to store (src/evals/item-parse.ts); at most `maxItems`, at least one. */
/** Where an upload is read: the web's CPU pool (src/cpu), or inline. */
export interface ItemReader {
  readItems(upload: { format: ItemFormat; content: Uint8Array; maxItems: number }): Promise<ItemRows>;
}

export async function readItems(ctx: AppContext, cpu: ItemReader, options: { maxItems: number; maxUploadBytes: number; idleMs: number }): Promise<{ rows: Uint8Array; count: number }> {
  let format: ItemFormat | undefined;
  let content: Uint8Array | undefined;
  if (ctx.is('multipart')) {
    const file = await readSingleFile(ctx, options.maxUploadBytes, { noun: 'dataset file', idleMs: options.idleMs });
    format = formatOfName(file.filename) ?? formatOfType(file.fields.format ?? '');
    if (!format) throw refuse(`${file.filename || 'the file'} is not JSONL or CSV: ${FORMATS_SAID}`, ['body', 'file'], 'unsupported_format');
    content = file.bytes;
  } else {
    format = formatOfType(ctx.get('content-type') || 'application/json');
    if (!format) throw refuse(`${ctx.get('content-type')} is not JSONL or CSV: ${FORMATS_SAID}`, ['body'], 'unsupported_format');
    content = ctx.state.body instanceof Uint8Array ? ctx.state.body : undefined;
  }
  if (!content?.length) throw refuse(`no items were sent: ${FORMATS_SAID}`, ['body'], 'missing');
  const read = await cpu.readItems({ format, content, maxItems: options.maxItems });
  if ('refused' in read) throw new ValidationError(read.refused);
  return read;
}
