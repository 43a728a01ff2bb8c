import type { ChildProcess } from 'node:child_process';
import { exchange, loop, prose } from './hostile.js';
import { alternatingRates, benchEnvironment, rateRow, round, runToEnd, runRateProcesses, stop } from './support.js';

/**
 * Promises under shared use on the newest surfaces (DESIGN §21, §23, §24; issue 44), for
 * `npm run bench -- trust`: the hostile inputs its phases run (each bounded in requests and time,
 * each tallying what it got), and what a 2 KB output schema costs a run (runs/s, on against off).
 */
type Bench = Awaited<ReturnType<typeof benchEnvironment>>;

export const QUICK = process.env.BENCH_QUICK === '1';
/** A hostile request given up on after this long (the server may still be busy with it: see `settle`). */
const REQUEST_TIMEOUT_MS = QUICK ? 20_000 : 60_000;
/** Requests per client and phase at most. */
const MAX_EACH = 200;
const MB = 1024 * 1024;

export interface HostileLoad {
  name: string;
  /** Sends until `until` (performance.now() ms), then resolves to a tally of the answers. */
  load: (until: number) => Promise<string>;
}

const jsonHeaders = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });
/** Every request carries a fresh value, so no cache of compiled schemas (by their hash) answers for it. */
let nonce = 0;
const fresh = () => `bench ${++nonce}`;

/** (a) A `$defs` entry of 150 string properties referenced from 150 properties (~8 KB): ajv inlines it at each use. */
function fanOutSchema(): Record<string, unknown> {
  const item = { type: 'object', properties: Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`p${i}`, { type: 'string' }])) };
  const properties = Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`f${i}`, { $ref: '#/$defs/item' }]));
  return { title: fresh(), type: 'object', $defs: { item }, properties };
}

/** (b) 19 links of `allOf` over two `$ref`s to the next (~1.3 KB): 2^19 paths for the filler and the validator. */
function chainSchema(): Record<string, unknown> {
  const links = 19;
  const $defs: Record<string, unknown> = Object.fromEntries(Array.from({ length: links }, (_, i) => [`a${i}`, { allOf: [{ $ref: `#/$defs/a${i + 1}` }, { $ref: `#/$defs/a${i + 1}` }] }]));
  $defs[`a${links}`] = { type: 'object' };
  return { $comment: fresh(), $defs, $ref: '#/$defs/a0' };
}

/** (c) A backtracking pattern: `(a+)+$` against a run of a's that is not at the end doubles its work per `a`. */
const backtrackingSchema = () => ({ $comment: fresh(), type: 'object', properties: { answer: { type: 'string', pattern: '(a+)+$' } }, required: ['answer'] });
/** The local model fills string fields with its answer, which quotes the question: `You asked "aaa…a!". …`. */
const BACKTRACKING_AS = 27;
const BACKTRACKING_QUESTION = `${'a'.repeat(BACKTRACKING_AS)}!`;

/** A run to its end, given up on after REQUEST_TIMEOUT_MS: `http 422`, or `200 succeeded` / `200 failed`. */
async function runStatus(url: string, key: string, body: Record<string, unknown>): Promise<string> {
  const { status } = await runToEnd(url, key, 'react', body, AbortSignal.timeout(REQUEST_TIMEOUT_MS));
  return status.startsWith('http ') ? status.slice(5) : `run ${status}`;
}

/** A multipart body of one file (the field `file`), as a dataset upload sends it. */
function multipartFile(filename: string, type: string, content: Buffer): { body: Buffer; contentType: string } {
  const boundary = `trustbench${Date.now().toString(36)}`;
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n`;
  return { body: Buffer.concat([Buffer.from(head), content, Buffer.from(`\r\n--${boundary}--\r\n`)]), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Lines made by `line(i)` until `bytes` or `maxLines`, whichever comes first. */
function linesOf(bytes: number, maxLines: number, line: (i: number) => string): string[] {
  const lines: string[] = [];
  for (let size = 0; size < bytes && lines.length < maxLines; size += lines.at(-1)!.length + 1) lines.push(line(lines.length));
  return lines;
}

/** (d) ~10 MB of items (DATASET_UPLOAD_MAX_BYTES is 10 MiB), under DATASET_MAX_ITEMS (10,000): ~1 KB each. */
const UPLOAD_BYTES = 10_000_000;
const UPLOAD_ITEMS = 9_900;
const csvUpload = () =>
  multipartFile('items.csv', 'text/csv', Buffer.from(['q,expected,topic', ...linesOf(UPLOAD_BYTES, UPLOAD_ITEMS, (i) => `"${prose(900, i + 1)}","${prose(80, i + 7)}",topic ${i % 17}`)].join('\n')));
const jsonlUpload = () =>
  multipartFile('items.jsonl', 'application/x-ndjson', Buffer.from(linesOf(UPLOAD_BYTES, UPLOAD_ITEMS, (i) => JSON.stringify({ input: { q: prose(900, i + 1) }, expected: prose(80, i + 7), metadata: { topic: i % 17 } })).join('\n')));

/**
 * (e) A JSONL file whose last line (1.8 MB, over the 1 MiB below which a line's depth is checked
 * where it is read) holds metadata nested 300,000 objects deep.
 */
const DEEP_LEVELS = 300_000;
function deepJsonlUpload() {
  const lines = linesOf(100_000, 1000, (i) => JSON.stringify({ input: { q: prose(500, i + 1) } }));
  lines.push(`{"input":{"q":"deep"},"metadata":{"deep":${'{"a":'.repeat(DEEP_LEVELS)}1${'}'.repeat(DEEP_LEVELS)}}}`);
  return multipartFile('deep.jsonl', 'application/x-ndjson', Buffer.from(lines.join('\n')));
}

/** A fresh dataset (10,000 items at most each) and one upload of `file` into it: the upload's status. */
async function uploadItems(url: string, key: string, file: { body: Buffer; contentType: string }): Promise<number> {
  const created = await exchange(url, { method: 'POST', path: '/api/datasets', headers: jsonHeaders(key), body: Buffer.from(JSON.stringify({ name: fresh() })), timeoutMs: REQUEST_TIMEOUT_MS });
  if (created.status !== 201) return created.status;
  const { id } = JSON.parse(created.text) as { id: string };
  const headers = { authorization: `Bearer ${key}`, 'content-type': file.contentType };
  return (await exchange(url, { method: 'POST', path: `/api/datasets/${id}/items`, headers, body: file.body, timeoutMs: REQUEST_TIMEOUT_MS })).status;
}

const size = (bytes: number) => (bytes >= MB ? `${round(bytes / MB, 1)} MB` : `${round(bytes / 1024, 1)} KB`);
const jsonSize = (value: unknown) => size(Buffer.byteLength(JSON.stringify(value)));

/** The hostile inputs of issue 44, each a phase: caller-supplied schemas and patterns, and structured uploads. */
export async function surfaceLoads(url: string, bench: Bench): Promise<HostileLoad[]> {
  const { key } = await bench.user('surfaces@example.test');
  // Upload slots are per user (UPLOADS_PER_USER, 2): one user per uploading client.
  const uploaders = await Promise.all(Array.from({ length: 4 }, (_, i) => bench.user(`dataset-uploader-${i}@example.test`)));
  const csv = csvUpload();
  const jsonl = jsonlUpload();
  const deep = deepJsonlUpload();
  const createAgent = async () => (await exchange(url, { method: 'POST', path: '/api/agents', headers: jsonHeaders(key), body: Buffer.from(JSON.stringify({ name: fresh(), output_schema: fanOutSchema() })), timeoutMs: REQUEST_TIMEOUT_MS })).status;
  return [
    { name: `(a) 2 clients creating agents, output schema $defs×150 ref'd 150× (${jsonSize(fanOutSchema())})`, load: (until) => loop(2, until, createAgent, MAX_EACH) },
    { name: `(b) 2 clients running with a 19-link allOf/$ref chain (${jsonSize(chainSchema())})`, load: (until) => loop(2, until, () => runStatus(url, key, { q: 'What is 2+3?', output_schema: chainSchema() }), MAX_EACH) },
    { name: `(c) 2 clients running with pattern (a+)+$, ${BACKTRACKING_AS} a's + '!'`, load: (until) => loop(2, until, () => runStatus(url, key, { q: BACKTRACKING_QUESTION, output_schema: backtrackingSchema() }), MAX_EACH) },
    { name: `(d) 4 clients uploading a ${size(csv.body.length)} CSV dataset`, load: (until) => loop(4, until, (client) => uploadItems(url, uploaders[client]!.key, csv), MAX_EACH) },
    { name: `(d) 4 clients uploading a ${size(jsonl.body.length)} JSONL dataset`, load: (until) => loop(4, until, (client) => uploadItems(url, uploaders[client]!.key, jsonl), MAX_EACH) },
    { name: `(e) 2 clients uploading a ${size(deep.body.length)} JSONL, one line ${DEEP_LEVELS.toLocaleString('en')} deep`, load: (until) => loop(2, until, (client) => uploadItems(url, uploaders[client]!.key, deep), MAX_EACH) },
  ];
}

const ACTIVE = ['queued', 'running'];
/** Waits (at most `seconds`) until no run is queued or running, so one phase's leftover work is not charged to the next; a note when some still are. */
export async function settle(bench: Bench, seconds: number): Promise<string> {
  const until = performance.now() + seconds * 1000;
  for (;;) {
    const [{ count }] = (await bench.knex('runs').whereIn('status', ACTIVE).count({ count: '*' })) as [{ count: string | number }];
    if (Number(count) === 0) return '';
    if (performance.now() > until) return `; ${count} runs still active ${seconds} s after`;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * A 2 KB output schema of the kind a client sends (a triage record: enums, numbers, a nested
 * object, an array of `$ref`'d items), that the local model's filled answer satisfies. One string
 * field is free text (the local model puts its whole answer in each), so the structured answer
 * streams about as many words as the prose one and the runs differ by the schema's work alone.
 */
const described = (description: string, schema: Record<string, unknown>) => ({ ...schema, description });
const TWO_KB_SCHEMA = {
  title: 'ticket_triage',
  description: 'How a support request is routed: what it is about, how urgent, what next.',
  type: 'object',
  $defs: {
    action: {
      type: 'object',
      properties: {
        kind: described('What to do next', { type: 'string', enum: ['reply', 'refund', 'escalate', 'close', 'follow_up'] }),
        owner: described('Who does it', { type: 'string', enum: ['agent', 'billing', 'engineering', 'account_manager'] }),
        due_in_days: described('When, in days from now', { type: 'integer', minimum: 0, maximum: 365 }),
      },
      required: ['kind', 'owner', 'due_in_days'],
      additionalProperties: false,
    },
  },
  properties: {
    summary: described('The request in a sentence or two', { type: 'string', minLength: 1 }),
    category: described('The queue it belongs to', { type: 'string', enum: ['billing', 'technical', 'account', 'shipping', 'other'] }),
    priority: described('0 (whenever) to 5 (now)', { type: 'integer', minimum: 0, maximum: 5 }),
    sentiment: described("The customer's tone", { type: 'string', enum: ['positive', 'neutral', 'negative', 'angry'] }),
    confidence: described('How sure the triage is, from 0 to 1', { type: 'number', minimum: 0, maximum: 1 }),
    needs_human: described('Whether a person must read it first', { type: 'boolean' }),
    tags: described('Labels for search and reports', { type: 'array', items: { type: 'string', enum: ['refund', 'outage', 'login', 'invoice', 'bug', 'feature', 'praise'] }, maxItems: 7 }),
    customer: described('Who wrote, as far as the message tells', {
      type: 'object',
      properties: {
        language: described('The language they wrote in', { type: 'string', enum: ['en', 'de', 'fr', 'es', 'it', 'other'] }),
        plan: described('Their plan, if they said', { type: 'string', enum: ['free', 'pro', 'team', 'enterprise', 'unknown'] }),
        returning: described('Whether they mention an earlier ticket', { type: 'boolean' }),
      },
      required: ['language', 'plan', 'returning'],
      additionalProperties: false,
    }),
    actions: described('The next steps, the most urgent first', { type: 'array', items: { $ref: '#/$defs/action' }, minItems: 1, maxItems: 5 }),
  },
  required: ['summary', 'category', 'priority', 'sentiment', 'confidence', 'needs_human', 'tags', 'customer', 'actions'],
  additionalProperties: false,
};

const COST_PORT = 3965;
const COST_CLIENTS = 20;
const COST_ROUND_S = QUICK ? 3 : 6;
const COST_ROUNDS = QUICK ? 2 : 4;
/** As the budgets' half of `trust`: the local model streams a word every 2 ms. */
const COST_TOKEN_DELAY_MS = 2;

/**
 * Run-path cost of structured outputs (DESIGN §23): completed runs/s at 20 clients of an agent with
 * a 2 KB output schema (its answers filled and validated) against the same agent without one,
 * alternating rounds, on a web and a worker of their own. Target ≥ 0.95.
 */
export async function structuredCostFigures(): Promise<void> {
  const bench = await benchEnvironment('trust_structured');
  const started: ChildProcess[] = [];
  try {
    started.push(...(await runRateProcesses(bench.env, COST_PORT, COST_TOKEN_DELAY_MS)));
    const url = `http://127.0.0.1:${COST_PORT}`;
    const { key } = await bench.user('structured-cost@example.test');
    const agentOf = async (outputSchema: Record<string, unknown> | null) => {
      const created = await exchange(url, { method: 'POST', path: '/api/agents', headers: jsonHeaders(key), body: Buffer.from(JSON.stringify({ name: fresh(), tools: [], output_schema: outputSchema })) });
      if (created.status !== 201) throw new Error(`agent: ${created.status} ${created.text}`);
      return (JSON.parse(created.text) as { id: string }).id;
    };
    const run = (agentId: string) => async () => {
      const { status } = await runToEnd(url, key, 'react', { q: 'hello', agent_id: agentId });
      if (status !== 'succeeded') throw new Error(status);
    };
    const names = { off: 'agent without an output schema', on: `agent with a ${jsonSize(TWO_KB_SCHEMA)} output schema` };
    const variants = { [names.off]: run(await agentOf(null)), [names.on]: run(await agentOf(TWO_KB_SCHEMA)) };
    const rates = await alternatingRates(variants, COST_CLIENTS, COST_ROUND_S, COST_ROUNDS);
    console.log(`\nstructured outputs: completed runs/s at ${COST_CLIENTS} clients (local model), ${COST_ROUNDS} alternating rounds of ${COST_ROUND_S} s\n`);
    console.table(Object.fromEntries(Object.entries(rates).map(([name, r]) => [name, rateRow(r)])));
    console.log(`runs/s with the schema / without = ${round(rates[names.on]!.perSecond / rates[names.off]!.perSecond, 3)} (target ≥ 0.95)`);
  } finally {
    for (const child of started.reverse()) await stop(child);
    await bench.drop();
  }
}
