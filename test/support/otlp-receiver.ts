import { createServer, type Server } from 'node:http';
import { gunzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { eventually } from './eventually.js';

/**
 * A small OTLP/HTTP trace receiver on 127.0.0.1, as a collector would be: it keeps every POST to
 * /v1/traces and decodes it, OTLP/JSON directly and OTLP/protobuf with the wire-format reader
 * below (the OTel packages ship a protobuf writer for requests, no reader), into one span list.
 */

export type AttributeValue = string | number | boolean | AttributeValue[] | { [key: string]: AttributeValue } | null;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, AttributeValue>;
  /** 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  events: { name: string; attributes: Record<string, AttributeValue> }[];
  /** The resource's attributes (`service.name`, …). */
  resource: Record<string, AttributeValue>;
  scope: string;
}

export interface ReceivedRequest {
  path: string;
  contentType: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export const SPAN_KIND = { internal: 1, server: 2, client: 3 } as const;

export class OtlpReceiver {
  readonly requests: ReceivedRequest[] = [];
  private readonly server: Server;
  url = '';

  private constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
        const contentType = req.headers['content-type'] ?? '';
        this.requests.push({ path: req.url ?? '', contentType, headers: req.headers, body });
        // An empty ExportTraceServiceResponse: full success.
        const json = contentType.includes('json');
        res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
        res.end(json ? '{}' : undefined);
      });
    });
  }

  static async start(): Promise<OtlpReceiver> {
    const receiver = new OtlpReceiver();
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    receiver.url = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}`;
    return receiver;
  }

  /** Every span received so far, decoded by its request's content type. */
  spans(): ReceivedSpan[] {
    return this.requests.filter((r) => r.path === '/v1/traces').flatMap((r) => (r.contentType.includes('json') ? decodeJson(r.body) : decodeProtobuf(r.body)));
  }

  /** Polls the received spans until `pick` finds what it wants (deadline: `timeoutMs`). */
  async waitFor<T>(what: string, pick: (spans: ReceivedSpan[]) => T | undefined | false, timeoutMs = 20_000): Promise<T> {
    return eventually(async () => pick(this.spans()), what, { timeoutMs, everyMs: 50 });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** The spans of one trace. */
export const inTrace = (spans: ReceivedSpan[], traceId: string) => spans.filter((s) => s.traceId === traceId);

// OTLP/JSON (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding): ids in hex, int64 as strings or numbers.

interface JsonKeyValue {
  key: string;
  value?: JsonAnyValue;
}
interface JsonAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: JsonAnyValue[] };
  kvlistValue?: { values?: JsonKeyValue[] };
  bytesValue?: string;
}

function jsonValue(value: JsonAnyValue | undefined): AttributeValue {
  if (!value) return null;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(jsonValue);
  if (value.kvlistValue) return jsonAttributes(value.kvlistValue.values);
  if (value.bytesValue !== undefined) return value.bytesValue;
  return null;
}

const jsonAttributes = (list: JsonKeyValue[] | undefined) => Object.fromEntries((list ?? []).map((kv) => [kv.key, jsonValue(kv.value)]));

function decodeJson(body: Buffer): ReceivedSpan[] {
  const request = JSON.parse(body.toString('utf8'));
  return (request.resourceSpans ?? []).flatMap((rs: any) => {
    const resource = jsonAttributes(rs.resource?.attributes);
    return (rs.scopeSpans ?? []).flatMap((ss: any) =>
      (ss.spans ?? []).map(
        (s: any): ReceivedSpan => ({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ?? '',
          name: s.name,
          kind: s.kind ?? 0,
          attributes: jsonAttributes(s.attributes),
          status: { code: s.status?.code ?? 0, message: s.status?.message ?? '' },
          events: (s.events ?? []).map((e: any) => ({ name: e.name, attributes: jsonAttributes(e.attributes) })),
          resource,
          scope: ss.scope?.name ?? '',
        }),
      ),
    );
  });
}

// OTLP/protobuf: a protobuf wire-format reader for the fields of opentelemetry/proto/collector/trace/v1.

class Reader {
  pos = 0;
  constructor(private readonly buf: Uint8Array) {}

  get done(): boolean {
    return this.pos >= this.buf.length;
  }

  varint(): bigint {
    let result = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (this.pos >= this.buf.length) throw new Error('truncated varint');
      const byte = this.buf[this.pos++]!;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
    }
  }

  tag(): { field: number; wire: number } {
    const tag = Number(this.varint());
    return { field: tag >>> 3, wire: tag & 7 };
  }

  bytes(): Uint8Array {
    const length = Number(this.varint());
    const out = this.buf.subarray(this.pos, this.pos + length);
    if (out.length !== length) throw new Error('truncated field');
    this.pos += length;
    return out;
  }

  string(): string {
    return new TextDecoder().decode(this.bytes());
  }

  fixed64(): Uint8Array {
    const out = this.buf.subarray(this.pos, this.pos + 8);
    this.pos += 8;
    return out;
  }

  skip(wire: number): void {
    if (wire === 0) this.varint();
    else if (wire === 1) this.pos += 8;
    else if (wire === 2) this.bytes();
    else if (wire === 5) this.pos += 4;
    else throw new Error(`unsupported wire type ${wire}`);
  }

  /** Each field of the message, in order: `read` consumes the fields it knows; the rest are skipped. */
  fields(read: (field: number, wire: number) => boolean): void {
    while (!this.done) {
      const { field, wire } = this.tag();
      if (!read(field, wire)) this.skip(wire);
    }
  }
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

/** AnyValue: string 1, bool 2, int64 3, double 4, ArrayValue 5, KeyValueList 6, bytes 7. */
function anyValue(buf: Uint8Array): AttributeValue {
  let value: AttributeValue = null;
  const r = new Reader(buf);
  r.fields((field, wire) => {
    if (field === 1 && wire === 2) value = r.string();
    else if (field === 2 && wire === 0) value = r.varint() !== 0n;
    else if (field === 3 && wire === 0) value = Number(BigInt.asIntN(64, r.varint()));
    else if (field === 4 && wire === 1) value = Buffer.from(r.fixed64()).readDoubleLE(0);
    else if (field === 5 && wire === 2) value = repeated(r.bytes(), 1, anyValue);
    else if (field === 6 && wire === 2) value = Object.fromEntries(repeated(r.bytes(), 1, keyValue));
    else if (field === 7 && wire === 2) value = hex(r.bytes());
    else return false;
    return true;
  });
  return value;
}

/** The messages of one repeated message field. */
function repeated<T>(buf: Uint8Array, field: number, decode: (message: Uint8Array) => T): T[] {
  const out: T[] = [];
  const r = new Reader(buf);
  r.fields((f, w) => {
    if (f !== field || w !== 2) return false;
    out.push(decode(r.bytes()));
    return true;
  });
  return out;
}

/** KeyValue: key 1, value 2. */
function keyValue(buf: Uint8Array): [string, AttributeValue] {
  let key = '';
  let value: AttributeValue = null;
  const r = new Reader(buf);
  r.fields((field, wire) => {
    if (field === 1 && wire === 2) key = r.string();
    else if (field === 2 && wire === 2) value = anyValue(r.bytes());
    else return false;
    return true;
  });
  return [key, value];
}

const attributesOf = (buf: Uint8Array, field: number) => Object.fromEntries(repeated(buf, field, keyValue));

/** Status: message 2, code 3. */
function status(buf: Uint8Array): { code: number; message: string } {
  const out = { code: 0, message: '' };
  const r = new Reader(buf);
  r.fields((field, wire) => {
    if (field === 2 && wire === 2) out.message = r.string();
    else if (field === 3 && wire === 0) out.code = Number(r.varint());
    else return false;
    return true;
  });
  return out;
}

/** Span.Event: name 2, attributes 3. */
function event(buf: Uint8Array): { name: string; attributes: Record<string, AttributeValue> } {
  let name = '';
  const r = new Reader(buf);
  r.fields((field, wire) => {
    if (field !== 2 || wire !== 2) return false;
    name = r.string();
    return true;
  });
  return { name, attributes: attributesOf(buf, 3) };
}

/** Span: trace_id 1, span_id 2, parent_span_id 4, name 5, kind 6, attributes 9, events 11, status 15. */
function span(buf: Uint8Array, resource: Record<string, AttributeValue>, scope: string): ReceivedSpan {
  const out: ReceivedSpan = { traceId: '', spanId: '', parentSpanId: '', name: '', kind: 0, attributes: attributesOf(buf, 9), status: { code: 0, message: '' }, events: repeated(buf, 11, event), resource, scope };
  const r = new Reader(buf);
  r.fields((field, wire) => {
    if (field === 1 && wire === 2) out.traceId = hex(r.bytes());
    else if (field === 2 && wire === 2) out.spanId = hex(r.bytes());
    else if (field === 4 && wire === 2) out.parentSpanId = hex(r.bytes());
    else if (field === 5 && wire === 2) out.name = r.string();
    else if (field === 6 && wire === 0) out.kind = Number(r.varint());
    else if (field === 15 && wire === 2) out.status = status(r.bytes());
    else return false;
    return true;
  });
  return out;
}

/** InstrumentationScope: name 1. */
function scopeName(buf: Uint8Array): string {
  let name = '';
  const r = new Reader(buf);
  r.fields((field, wire) => {
    if (field !== 1 || wire !== 2) return false;
    name = r.string();
    return true;
  });
  return name;
}

/**
 * ExportTraceServiceRequest: resource_spans 1 → ResourceSpans: resource 1 (attributes 1), scope_spans 2
 * → ScopeSpans: scope 1, spans 2.
 */
export function decodeProtobuf(body: Uint8Array): ReceivedSpan[] {
  return repeated(body, 1, (resourceSpans) => {
    const resource = Object.fromEntries(repeated(resourceSpans, 1, (r) => attributesOf(r, 1)).flatMap((attributes) => Object.entries(attributes)));
    return repeated(resourceSpans, 2, (scopeSpans) => {
      const scope = repeated(scopeSpans, 1, scopeName)[0] ?? '';
      return repeated(scopeSpans, 2, (s) => span(s, resource, scope));
    }).flat();
  }).flat();
}
