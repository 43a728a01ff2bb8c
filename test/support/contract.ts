import { speaksOpenAi } from '../../src/http/openai-errors.js';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { createParser } from 'eventsource-parser';

/**
 * The contract test (DESIGN §12): every response a test receives from an app or stack web process
 * is held to the OpenAPI document that process serves: its status must be documented for the
 * operation, the documented required headers and media type present, and its body (JSON, or each
 * event of an SSE stream) valid against the documented schema. Mismatches fail the test that saw
 * them (test/support/contract-setup.ts). Bodies are checked as the test reads them, so nothing is
 * buffered or waited for on the test's behalf.
 */

type Json = Record<string, any>;
type Fetch = typeof globalThis.fetch;

interface Operation {
  method: string;
  path: string;
  pattern: RegExp;
  /** Static segments first: `/docs/init.js` before `/docs/{file}`. */
  params: number;
  responses: Json;
}

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

class Contract {
  private readonly ajv = new Ajv2020({ strict: false });
  private readonly operations: Operation[];
  /** By schema object: the document's schemas are the same objects on every call. */
  private readonly validators = new WeakMap<Json, ValidateFunction>();

  constructor(private readonly document: Json) {
    addFormats.default(this.ajv);
    this.ajv.addSchema({ $id: 'openapi', $defs: this.local(document.components.schemas) });
    this.operations = Object.entries(document.paths as Record<string, Json>)
      .flatMap(([path, methods]) =>
        Object.entries(methods).map(([method, op]) => ({
          method: method.toUpperCase(),
          path,
          pattern: new RegExp(`^${path.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+')}$`),
          params: (path.match(/\{/g) ?? []).length,
          responses: op.responses,
        })),
      )
      .sort((a, b) => a.params - b.params);
    // Streams carry many events from the first moment: their validators are ready before any arrives.
    for (const branch of (document.components.schemas.RunEvent?.anyOf ?? []) as Json[]) this.validator(branch);
  }

  /** The response object documented for `method path` answering `status`, or why there is none. */
  documented(method: string, pathname: string, status: number): { response?: Json; problem?: string; where: string } {
    const candidates = this.operations.filter((op) => op.pattern.test(pathname));
    const op = candidates.find((candidate) => candidate.method === method);
    if (!op) {
      // A path no route serves (404), a method the path lacks (405, or 204 to OPTIONS), or a route only a test adds.
      const generic = status === 404 || status === 405 ? this.resolve(this.document.components.responses[String(status)]) : undefined;
      return { response: generic, where: `${method} ${pathname}` };
    }
    const where = `${method} ${op.path}`;
    const declared = op.responses[String(status)];
    if (!declared) return { problem: `${where} answered ${status}, which the document does not list (${Object.keys(op.responses).join(', ')})`, where };
    return { response: this.resolve(declared), where };
  }

  validator(schema: Json): ValidateFunction {
    let validate = this.validators.get(schema);
    if (!validate) {
      validate = this.ajv.compile(this.local(schema, 'openapi'));
      this.validators.set(schema, validate);
    }
    return validate;
  }

  /**
   * The schema of one event type of a stream whose schema is a union of events told apart by
   * `event` (`RunEvent`): validating against that branch alone keeps a busy stream cheap to check.
   */
  eventSchema(schema: Json, type: string): Json | undefined {
    const ref = schema.$ref as string | undefined;
    const union = ref ? this.document.components.schemas[ref.split('/').at(-1)!] : schema;
    const branches = (union.anyOf ?? union.oneOf) as Json[] | undefined;
    if (!branches) return schema;
    return branches.find((branch) => branch.properties?.event?.const === type);
  }

  /** The document's references to its named schemas, as references into the schema Ajv holds them in. */
  private local(schema: Json, base = ''): Json {
    return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', `"${base}#/$defs/`));
  }

  private resolve(response: Json | undefined): Json | undefined {
    const ref = response?.$ref as string | undefined;
    return ref ? this.document.components.responses[ref.split('/').at(-1)!] : response;
  }
}

const mediaType = (contentType: string | null) => (contentType ?? '').split(';')[0]!.trim().toLowerCase();
const describeErrors = (validate: ValidateFunction) =>
  (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`).join('; ');

/** The document each watched origin serves, compiled; origins serving the same document share one. */
const contracts = new Map<string, Promise<Contract>>();
const compiled = new Map<string, Contract>();
const mismatches: string[] = [];
let originalFetch: Fetch | undefined;

/** Holds every later response from `baseUrl` to its /openapi.json (a no-op unless the setup file installed the check). */
export async function watchContract(baseUrl: string): Promise<void> {
  if (!originalFetch) return;
  const origin = new URL(baseUrl).origin;
  if (!contracts.has(origin)) {
    const loaded = originalFetch(`${origin}/openapi.json`).then(async (res) => {
      if (res.status !== 200) throw new Error(`GET ${origin}/openapi.json answered ${res.status}`);
      const text = await res.text();
      const contract = compiled.get(text) ?? new Contract(JSON.parse(text) as Json);
      compiled.set(text, contract);
      return contract;
    });
    contracts.set(origin, loaded);
  }
  await contracts.get(origin);
}

/** Stops checking `baseUrl` (its server closed: another server may get the port). */
export function forgetContract(baseUrl: string): void {
  contracts.delete(new URL(baseUrl).origin);
}

/** The mismatches seen since the last call. */
export function takeMismatches(): string[] {
  return mismatches.splice(0);
}

function checkHeaders(response: Json, res: Response, where: string): void {
  for (const [name, header] of Object.entries((response.headers ?? {}) as Record<string, Json>)) {
    if (header.required && !res.headers.has(name)) mismatches.push(`${where} ${res.status}: header ${name} is documented as required and missing`);
  }
}

/**
 * The body as the test reads it, unchanged, handing each piece's text to `check`; `end` is called
 * once the body is over (`complete` false when it was cut off or cancelled). Nothing is read ahead
 * of the test.
 */
function inspected(body: ReadableStream<Uint8Array>, check: BodyCheck): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let ended = false;
  const end = (complete: boolean) => {
    if (ended) return;
    ended = true;
    check.onText(decoder.decode());
    check.onEnd(complete);
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            end(true);
            controller.close();
            return;
          }
          check.onText(decoder.decode(value, { stream: true }));
          controller.enqueue(value);
        } catch (err) {
          end(false);
          controller.error(err);
        }
      },
      cancel(reason) {
        end(false);
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

interface BodyCheck {
  onText(piece: string): void;
  onEnd(complete: boolean): void;
}

function checkJson(contract: Contract, schema: Json, where: string, status: number): BodyCheck {
  let text = '';
  return {
    onText: (piece) => (text += piece),
    onEnd: (complete) => {
      if (!complete) return;
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        mismatches.push(`${where} ${status}: the body is not JSON: ${text.slice(0, 200)}`);
        return;
      }
      const validate = contract.validator(schema);
      if (!validate(body)) mismatches.push(`${where} ${status}: the body does not match the document: ${describeErrors(validate)}; body: ${text.slice(0, 300)}`);
    },
  };
}

/** Events are checked once the stream is over, so a test racing a live run pays nothing while it streams. */
function checkEvents(contract: Contract, schema: Json, where: string): BodyCheck {
  const pieces: string[] = [];
  const parser = createParser({
    onEvent(message) {
      const type = message.event ?? 'message';
      const branch = contract.eventSchema(schema, type);
      if (!branch) {
        mismatches.push(`${where}: event type ${type} is not documented`);
        return;
      }
      let data: unknown;
      try {
        data = JSON.parse(message.data);
      } catch {
        mismatches.push(`${where}: event ${type} carries data that is not JSON: ${message.data.slice(0, 200)}`);
        return;
      }
      const validate = contract.validator(branch);
      if (!validate({ event: type, id: message.id ?? '', data })) {
        mismatches.push(`${where}: event ${type} does not match the document: ${describeErrors(validate)}; data: ${message.data.slice(0, 300)}`);
      }
    },
  });
  return { onText: (piece) => pieces.push(piece), onEnd: () => parser.feed(pieces.join('')) };
}

async function checked(request: { method: string; url: URL }, res: Response): Promise<Response> {
  const contract = await contracts.get(request.url.origin);
  // The OpenAI-compatible endpoints follow OpenAI's contract, not this document (DESIGN §16): the official SDK checks them.
  if (!contract || speaksOpenAi(request.url.pathname)) return res;
  const { response, problem, where } = contract.documented(request.method, request.url.pathname, res.status);
  if (problem) mismatches.push(problem);
  if (!response) return res;
  checkHeaders(response, res, where);
  const content = (response.content ?? {}) as Record<string, Json>;
  const types = Object.keys(content);
  const received = mediaType(res.headers.get('content-type'));
  if (types.length === 0 || NULL_BODY_STATUSES.has(res.status) || res.body === null || request.method === 'HEAD') return res;
  // OpenAPI keys may be media ranges (image/*): the exact type first, then the range covering it.
  const documented = types.find((t) => t === received) ?? types.find((t) => t.endsWith('/*') && received.startsWith(t.slice(0, -1)));
  if (!documented) {
    mismatches.push(`${where} ${res.status}: content-type ${received || '(none)'} is not documented (${types.join(', ')})`);
    return res;
  }
  const schema = content[documented]!.schema as Json | undefined;
  if (!schema) return res;
  const check = received === 'application/json' ? checkJson(contract, schema, where, res.status) : received === 'text/event-stream' ? checkEvents(contract, schema, where) : undefined;
  if (!check) return res;
  return new Response(inspected(res.body, check), { status: res.status, statusText: res.statusText, headers: res.headers });
}

function requestOf(input: Parameters<Fetch>[0], init?: Parameters<Fetch>[1]): { method: string; url: URL } {
  const url = new URL(input instanceof Request ? input.url : String(input));
  const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
  return { method, url };
}

/** Wraps the process's fetch: responses from watched origins are checked, all others pass untouched. */
export function installContractCheck(): void {
  if (originalFetch) return;
  const fetch = globalThis.fetch;
  originalFetch = fetch;
  globalThis.fetch = async (input, init) => {
    const res = await fetch(input, init);
    const request = requestOf(input, init);
    return contracts.has(request.url.origin) ? checked(request, res) : res;
  };
}
