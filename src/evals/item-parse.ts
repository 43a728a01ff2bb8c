import * as v from 'valibot';
import { parse as parseCsv } from 'csv-parse/sync';
import { parseInput } from '../http/validation.js';
import { MAX_JSON_DEPTH } from '../shared/json-text.js';
import { ValidationError, type ValidationIssue } from '../shared/errors.js';
import { inputAsStored, newItemSchema } from './records.js';

/**
 * An items upload read into the rows to store (DESIGN §21, §24): run in the web's CPU pool
 * (src/cpu/tasks.ts), or inline where there is none. Pure: nothing here touches the process.
 */
export type ItemFormat = 'json' | 'jsonl' | 'csv';

export interface ItemsUpload {
  format: ItemFormat;
  /** The upload as UTF-8 (a leading BOM is dropped). */
  bytes: Uint8Array;
  length: number;
  maxItems: number;
}

/**
 * The validated items as the JSON text of a list of `{input, expected?, metadata}`, UTF-8 in memory
 * threads share (handed back without a copy, stored as one statement's parameter), or the 422's
 * issues (a thrown error loses its class across threads).
 */
export type ItemRows = { rows: Uint8Array; count: number } | { refused: ValidationIssue[] };

const refusal = (msg: string, loc: (string | number)[] = ['body'], type = 'value_error', ctx?: Record<string, unknown>): ValidationIssue[] => [{ loc, msg, type, input: null, ...(ctx ? { ctx } : {}) }];
const tooDeep = (where: string, loc: (string | number)[]) =>
  refusal(`${where} is nested deeper than ${MAX_JSON_DEPTH} levels (MAX_JSON_DEPTH)`, loc, 'json_invalid', { max_depth: MAX_JSON_DEPTH });
export const tooManyItems = (maxItems: number) => refusal(`at most ${maxItems} items may be sent at once (DATASET_MAX_ITEMS)`, ['body'], 'too_long', { max_items: maxItems });

class Refused extends Error {
  constructor(readonly issues: ValidationIssue[]) {
    super(issues[0]?.msg);
  }
}

export function readItemRows(upload: ItemsUpload): ItemRows {
  const text = Buffer.from(upload.bytes.buffer, upload.bytes.byteOffset, upload.length).toString('utf8').replace(/^\uFEFF/, '');
  try {
    const records = recordsOf(upload.format, text, upload.maxItems);
    if (records.length === 0) return { refused: refusal('no items were sent', ['body'], 'missing') };
    const items = parseInput(v.object({ items: v.array(newItemSchema) }), { items: records }, 'body').items;
    const rows = items.map((item) => ({ input: inputAsStored(item.input), ...(item.expected != null ? { expected: item.expected } : {}), metadata: item.metadata ?? {} }));
    return { rows: sharedUtf8(JSON.stringify(rows)), count: rows.length };
  } catch (err) {
    if (err instanceof Refused) return { refused: err.issues };
    if (err instanceof ValidationError) return { refused: err.detail.slice(0, 100) };
    throw err;
  }
}

function recordsOf(format: ItemFormat, text: string, maxItems: number): unknown[] {
  if (format === 'csv') return csvRecords(text, maxItems);
  if (format === 'jsonl') return jsonLines(text, maxItems);
  const deep = firstTooDeep(text);
  if (deep >= 0) {
    const item = text.trimStart().startsWith('[') ? topLevelIndexAt(text, deep) : undefined;
    throw new Refused(item === undefined ? tooDeep(`the JSON at character ${deep}`, ['body', deep]) : tooDeep(`item ${item}`, ['body', 'items', item]));
  }
  const value = parseJson(text, (message) => refusal('JSON decode error', ['body', Number(/position (\d+)/.exec(message)?.[1] ?? 0)], 'json_invalid', { error: message }));
  const list = Array.isArray(value) ? value : (value as { items?: unknown } | null)?.items;
  if (!Array.isArray(list)) throw new Refused(refusal('a JSON body is a list of items, or {"items": [...]}'));
  if (list.length > maxItems) throw new Refused(tooManyItems(maxItems));
  return list;
}

function jsonLines(text: string, maxItems: number): unknown[] {
  const records: unknown[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (!line) continue;
    if (records.length >= maxItems) throw new Refused(tooManyItems(maxItems));
    const loc = ['body', `line ${i + 1}`];
    if (firstTooDeep(line) >= 0) throw new Refused(tooDeep(`line ${i + 1}`, loc));
    records.push(parseJson(line, () => refusal(`line ${i + 1} is not JSON: JSONL has one JSON object per line`, loc, 'json_invalid')));
  }
  return records;
}

const CSV_KNOWN = new Set(['q', 'expected', 'image_ids']);

function csvRecords(text: string, maxItems: number): unknown[] {
  let rows: Record<string, string>[];
  try {
    rows = parseCsv(text, { columns: (header: string[]) => header.map((h) => h.trim()), skip_empty_lines: true, relax_column_count: false, to: maxItems + 1 });
  } catch (err) {
    throw new Refused(refusal(`not valid CSV: ${(err as Error).message}`, ['body'], 'csv_invalid'));
  }
  if (rows.length > maxItems) throw new Refused(tooManyItems(maxItems));
  if (rows.length > 0 && !('q' in rows[0]!)) {
    throw new Refused(refusal('the CSV header row needs a `q` column (the question); `expected` and `image_ids` are optional, other columns become metadata'));
  }
  return rows.map((row) => {
    const metadata = Object.fromEntries(Object.entries(row).filter(([column]) => !CSV_KNOWN.has(column)));
    return {
      input: { q: row.q, ...(row.image_ids ? { image_ids: row.image_ids } : {}) },
      ...(row.expected !== undefined && row.expected !== '' ? { expected: row.expected } : {}),
      ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
    };
  });
}

function parseJson(text: string, refuse: (message: string) => ValidationIssue[]): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Refused(refuse(err instanceof Error ? err.message : 'invalid JSON'));
  }
}

/** Where JSON text first nests deeper than MAX_JSON_DEPTH (strings skipped), or -1. */
function firstTooDeep(text: string): number {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) i = stringEnd(text, i);
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_JSON_DEPTH) return i;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return -1;
}

/** The index of the top-level list's item that holds character `position`. */
function topLevelIndexAt(text: string, position: number): number {
  let depth = 0;
  let index = 0;
  for (let i = 0; i < position; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) i = stringEnd(text, i);
    else if (c === 0x5b || c === 0x7b) depth++;
    else if (c === 0x5d || c === 0x7d) depth--;
    else if (c === 0x2c && depth === 1) index++;
  }
  return index;
}

/** The closing quote of the string opening at `start`. */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length && text.charCodeAt(i) !== 0x22) i += text.charCodeAt(i) === 0x5c ? 2 : 1;
  return i;
}

/** UTF-8 in a SharedArrayBuffer: a thread hands it back without a copy. */
function sharedUtf8(text: string): Uint8Array {
  const bytes = new Uint8Array(new SharedArrayBuffer(Buffer.byteLength(text)));
  new TextEncoder().encodeInto(text, bytes);
  return bytes;
}
