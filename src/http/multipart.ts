import busboy from 'busboy';
import type { Context } from 'koa';
import { PayloadTooLargeError, ValidationError } from '../shared/errors.js';
import { boundedBodyRead } from './body-guard.js';

export interface UploadedFile {
  filename: string;
  bytes: Buffer;
  /** Plain form fields sent alongside the file. */
  fields: Record<string, string>;
}

const invalid = (msg: string, type = 'value_error') => new ValidationError([{ loc: ['body', 'file'], msg, type, input: null }]);

export interface SingleFileOptions {
  /** The part the file must come in; any part name when absent. */
  field?: string;
  /** What the file is, for the 413 message. */
  noun?: string;
  /** BODY_IDLE_TIMEOUT_MS: a body silent this long, or cut off by its client, is given up (408). */
  idleMs: number;
}

/** File parts a body may carry before it is refused outright (one is read; a second is an error). */
const MAX_FILE_PARTS = 10;

/**
 * Reads a multipart/form-data body with exactly one file, refusing it past `maxBytes` (413), and
 * giving it up when it stalls or its client leaves (408), so it never keeps its caller waiting.
 */
export function readSingleFile(ctx: Context, maxBytes: number, { field, noun = 'file', idleMs }: SingleFileOptions): Promise<UploadedFile> {
  return boundedBodyRead(ctx.req, idleMs, () => parseSingleFile(ctx, maxBytes, field, noun));
}

function parseSingleFile(ctx: Context, maxBytes: number, field: string | undefined, noun: string): Promise<UploadedFile> {
  const part = field ? `a "${field}" part` : 'a file part';
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      // Names arrive as UTF-8 (what browsers and fetch send), not busboy's latin1 default.
      parser = busboy({ headers: ctx.req.headers, defParamCharset: 'utf8', limits: { files: MAX_FILE_PARTS, fileSize: maxBytes, fields: 10, fieldSize: 4096 } });
    } catch (err) {
      return reject(invalid(`Value error, ${(err as Error).message}`));
    }
    const fields: Record<string, string> = {};
    let file: { filename: string; chunks: Buffer[]; truncated: boolean } | undefined;
    let failure: Error | undefined;
    let extraFile = false;
    parser.on('field', (name, value) => (fields[name] = value));
    // busboy skips files past `limits.files` and says so here: the contract is one file, so that is refused.
    parser.on('filesLimit', () => (extraFile = true));
    parser.on('file', (name, stream, info) => {
      // A body that ends inside a part fails that part's stream too; the parser's own error reports it.
      stream.on('error', () => {});
      if (field !== undefined && name !== field) return stream.resume();
      if (file) {
        extraFile = true;
        return stream.resume();
      }
      const current = { filename: info.filename ?? '', chunks: [] as Buffer[], truncated: false };
      file = current;
      stream.on('data', (chunk: Buffer) => current.chunks.push(chunk));
      stream.on('limit', () => (current.truncated = true));
    });
    parser.on('error', (err: Error) => {
      failure ??= invalid(`Value error, the multipart body could not be parsed: ${err.message}`);
      ctx.req.unpipe(parser);
      ctx.req.resume();
      reject(failure);
    });
    parser.on('close', () => {
      if (failure) return;
      if (!file) return reject(invalid(`Field required: ${part}`, 'missing'));
      if (extraFile) return reject(invalid('Value error, exactly one file may be uploaded per request', 'too_many_files'));
      if (file.truncated) return reject(new PayloadTooLargeError(`The ${noun} exceeds ${maxBytes} bytes`));
      resolve({ filename: file.filename, bytes: Buffer.concat(file.chunks), fields });
    });
    ctx.req.pipe(parser);
  });
}
