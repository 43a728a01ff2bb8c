import * as v from 'valibot';
import { parse as parseCsv } from 'csv-parse/sync';
import type { AppContext } from '../http/context.js';
import { readSingleFile } from '../http/multipart.js';
import { parseInput } from '../http/validation.js';
import { parseJsonText } from '../http/body.js';
import { ValidationError } from '../shared/errors.js';
import { newItemSchema, type NewItem } from './records.js';

/**
 * Dataset items arrive as a JSON list (or `{items: [...]}`), as JSONL (one item per line), or as
 * CSV with a header row (`q`, optional `expected` and `image_ids`; every other column becomes
 * metadata), in the body or as a multipart upload of one file. Each bad item is named by its index.
 */
export type ItemFormat = 'json' | 'jsonl' | 'csv';

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

async function jsonLines(text: string, maxItems: number): Promise<unknown[]> {
  const records: unknown[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (!line) continue;
    if (records.length >= maxItems) throw tooMany(maxItems);
    try {
      records.push(await parseJsonText(line));
    } catch {
      throw refuse(`line ${i + 1} is not JSON: JSONL has one JSON object per line`, ['body', `line ${i + 1}`], 'json_invalid');
    }
  }
  return records;
}

const CSV_KNOWN = new Set(['q', 'expected', 'image_ids']);

function csvRecords(text: string, maxItems: number): unknown[] {
  let rows: Record<string, string>[];
  try {
    rows = parseCsv(text, { columns: (header: string[]) => header.map((h) => h.trim()), skip_empty_lines: true, bom: true, relax_column_count: false, to: maxItems + 1 });
  } catch (err) {
    throw refuse(`not valid CSV: ${(err as Error).message}`, ['body'], 'csv_invalid');
  }
  if (rows.length > maxItems) throw tooMany(maxItems);
  if (rows.length > 0 && !('q' in rows[0]!)) throw refuse('the CSV header row needs a `q` column (the question); `expected` and `image_ids` are optional, other columns become metadata');
  return rows.map((row) => {
    const metadata = Object.fromEntries(Object.entries(row).filter(([column]) => !CSV_KNOWN.has(column)));
    return {
      input: { q: row.q, ...(row.image_ids ? { image_ids: row.image_ids } : {}) },
      ...(row.expected !== undefined && row.expected !== '' ? { expected: row.expected } : {}),
      ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
    };
  });
}

const tooMany = (maxItems: number) => refuse(`at most ${maxItems} items may be sent at once`, ['body'], 'too_long');

async function recordsOf(format: ItemFormat, content: unknown, maxItems: number): Promise<unknown[]> {
  if (format === 'csv') return csvRecords(String(content), maxItems);
  if (format === 'jsonl') return jsonLines(String(content), maxItems);
  const value = typeof content === 'string' ? await parseJsonText(content) : content;
  const list = Array.isArray(value) ? value : (value as { items?: unknown } | null)?.items;
  if (!Array.isArray(list)) throw refuse('a JSON body is a list of items, or {"items": [...]}');
  if (list.length > maxItems) throw tooMany(maxItems);
  return list;
}

/** The request's items, validated; at most `maxItems`, at least one. */
export async function readItems(ctx: AppContext, options: { maxItems: number; maxUploadBytes: number; idleMs: number }): Promise<NewItem[]> {
  let format: ItemFormat | undefined;
  let content: unknown;
  if (ctx.is('multipart')) {
    const file = await readSingleFile(ctx, options.maxUploadBytes, { noun: 'dataset file', idleMs: options.idleMs });
    format = formatOfName(file.filename) ?? formatOfType(file.fields.format ?? '');
    if (!format) throw refuse(`${file.filename || 'the file'} is not JSONL or CSV: ${FORMATS_SAID}`, ['body', 'file'], 'unsupported_format');
    content = file.bytes.toString('utf8');
  } else {
    format = formatOfType(ctx.get('content-type') || 'application/json');
    if (!format) throw refuse(`${ctx.get('content-type')} is not JSONL or CSV: ${FORMATS_SAID}`, ['body'], 'unsupported_format');
    content = ctx.state.body;
  }
  if (content === undefined || content === '') throw refuse(`no items were sent: ${FORMATS_SAID}`, ['body'], 'missing');
  const records = await recordsOf(format, content, options.maxItems);
  if (records.length === 0) throw refuse('no items were sent', ['body'], 'missing');
  return parseInput(v.object({ items: v.array(newItemSchema) }), { items: records }, 'body').items;
}
