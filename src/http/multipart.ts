import busboy from 'busboy';
import type { Context } from 'koa';
import { PayloadTooLargeError, ValidationError } from '../shared/errors.js';

export interface UploadedFile {
  filename: string;
  bytes: Buffer;
  /** Plain form fields sent alongside the file. */
  fields: Record<string, string>;
}

const invalid = (msg: string, type = 'value_error') => new ValidationError([{ loc: ['body', 'file'], msg, type, input: null }]);

/** Reads a multipart/form-data body with exactly one file, refusing it past `maxBytes` (413). */
export function readSingleFile(ctx: Context, maxBytes: number): Promise<UploadedFile> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: ctx.req.headers, limits: { files: 1, fileSize: maxBytes, fields: 10, fieldSize: 4096 } });
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
    parser.on('file', (_name, stream, info) => {
      if (file) return stream.resume();
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
      if (!file) return reject(invalid('Field required: a file part', 'missing'));
      if (extraFile) return reject(invalid('Value error, exactly one file may be uploaded per request', 'too_many_files'));
      if (file.truncated) return reject(new PayloadTooLargeError(`The document exceeds ${maxBytes} bytes`));
      resolve({ filename: file.filename, bytes: Buffer.concat(file.chunks), fields });
    });
    ctx.req.pipe(parser);
  });
}
