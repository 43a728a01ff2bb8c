import * as v from 'valibot';

/**
 * The OpenTelemetry variables the platform honours (DESIGN §18), as entries of src/config.ts's
 * environment schema: config.ts stays the one reader of the environment, and the SDK is handed
 * explicit options built from these (src/telemetry/tracing.ts), never left to read them itself.
 */

export const SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;
export type SamplerName = (typeof SAMPLERS)[number];
export const PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export type OtlpProtocol = (typeof PROTOCOLS)[number];

export interface TracingConfig {
  /** Where spans are POSTed: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as is, else OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces`. */
  url: string;
  protocol: OtlpProtocol;
  /** OTEL_EXPORTER_OTLP_HEADERS, with OTEL_EXPORTER_OTLP_TRACES_HEADERS over it (credentials: never logged). */
  headers: Record<string, string>;
  /** One export request's limit (OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT). */
  timeoutMs: number;
  compression: 'gzip' | 'none';
  /** OTEL_SERVICE_NAME; unset → `agent-platform-web` or `agent-platform-worker` by the process's role. */
  serviceName?: string;
  /** OTEL_RESOURCE_ATTRIBUTES (`service.name` there counts when OTEL_SERVICE_NAME is unset, as the specification says). */
  resourceAttributes: Record<string, string>;
  /** OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG (the ratio of the `traceidratio` samplers). */
  sampler: { name: SamplerName; ratio: number };
  /** The batch span processor (OTEL_BSP_*). */
  batch: { scheduleDelayMs: number; exportTimeoutMs: number; maxQueueSize: number; maxExportBatchSize: number };
  /** OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: prompts, answers and tool arguments on the GenAI spans. */
  captureMessageContent: boolean;
}

const whole = (min: number, max: number) =>
  v.pipe(v.string(), v.regex(/^\d+$/, 'must be a whole number'), v.transform(Number), v.minValue(min), v.maxValue(max));

const flag = v.pipe(v.string(), v.trim(), v.toLowerCase(), v.picklist(['true', 'false'], 'must be true or false'));

const endpoint = v.pipe(
  v.string(),
  v.trim(),
  v.url('must be a URL'),
  v.check((s) => /^https?:\/\//i.test(s), 'must start with http:// or https:// (OTLP/HTTP; gRPC is not supported)'),
);

/** `key=value,key=value` with percent-encoded values (the W3C Baggage octet form the OTel specification names); undefined when malformed. */
function keyValuePairs(raw: string, key: RegExp): Record<string, string> | undefined {
  const pairs: Record<string, string> = {};
  for (const item of raw.split(',')) {
    if (!item.trim()) continue;
    const at = item.indexOf('=');
    if (at <= 0) return undefined;
    const name = item.slice(0, at).trim();
    if (!key.test(name)) return undefined;
    try {
      pairs[name] = decodeURIComponent(item.slice(at + 1).trim());
    } catch {
      return undefined;
    }
  }
  return pairs;
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/;
const ATTRIBUTE_KEY = /^[\x21-\x7e]{1,255}$/;

const pairList = (key: RegExp, what: string) =>
  v.pipe(
    v.string(),
    v.check((s) => keyValuePairs(s, key) !== undefined, `must be comma-separated ${what}=value pairs (values percent-encoded)`),
    v.transform((s) => keyValuePairs(s, key)!),
  );

const protocol = v.pipe(v.string(), v.trim(), v.picklist(PROTOCOLS, 'must be http/protobuf or http/json (gRPC is not supported)'));
const compression = v.pipe(v.string(), v.trim(), v.toLowerCase(), v.picklist(['gzip', 'none'], 'must be gzip or none'));

/** Entries of the environment schema (src/config.ts). */
export const tracingEnv = {
  OTEL_SDK_DISABLED: v.optional(flag),
  OTEL_TRACES_EXPORTER: v.optional(v.pipe(v.string(), v.trim(), v.toLowerCase(), v.picklist(['otlp', 'none'], 'must be otlp or none'))),
  OTEL_EXPORTER_OTLP_ENDPOINT: v.optional(endpoint),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: v.optional(endpoint),
  OTEL_EXPORTER_OTLP_PROTOCOL: v.optional(protocol),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: v.optional(protocol),
  OTEL_EXPORTER_OTLP_HEADERS: v.optional(pairList(HEADER_NAME, 'header')),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: v.optional(pairList(HEADER_NAME, 'header')),
  OTEL_EXPORTER_OTLP_TIMEOUT: v.optional(whole(1, 600_000)),
  OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: v.optional(whole(1, 600_000)),
  OTEL_EXPORTER_OTLP_COMPRESSION: v.optional(compression),
  OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: v.optional(compression),
  OTEL_SERVICE_NAME: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(255, 'must be at most 255 characters'))),
  OTEL_RESOURCE_ATTRIBUTES: v.optional(pairList(ATTRIBUTE_KEY, 'key')),
  OTEL_TRACES_SAMPLER: v.optional(v.pipe(v.string(), v.trim(), v.toLowerCase(), v.picklist(SAMPLERS, `must be one of ${SAMPLERS.join(', ')}`))),
  OTEL_TRACES_SAMPLER_ARG: v.optional(
    v.pipe(v.string(), v.trim(), v.transform(Number), v.number('must be a number between 0 and 1'), v.minValue(0, 'must be between 0 and 1'), v.maxValue(1, 'must be between 0 and 1')),
  ),
  OTEL_BSP_SCHEDULE_DELAY: v.optional(whole(1, 600_000)),
  OTEL_BSP_EXPORT_TIMEOUT: v.optional(whole(1, 600_000)),
  OTEL_BSP_MAX_QUEUE_SIZE: v.optional(whole(1, 1_000_000)),
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: v.optional(whole(1, 1_000_000)),
  OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: v.optional(flag),
};

type TracingEnv = v.InferOutput<v.ObjectSchema<typeof tracingEnv, undefined>>;

/** `OTEL_EXPORTER_OTLP_ENDPOINT` is a base URL: the signal's path goes after whatever path it has. */
function tracesUrl(base: string): string {
  return `${base.replace(/\/+$/, '')}/v1/traces`;
}

/** The tracing section of the config: undefined (tracing off) unless an OTLP endpoint is set and the SDK is not disabled. */
export function tracingConfig(e: TracingEnv): TracingConfig | undefined {
  const url = e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (e.OTEL_EXPORTER_OTLP_ENDPOINT ? tracesUrl(e.OTEL_EXPORTER_OTLP_ENDPOINT) : undefined);
  if (!url || e.OTEL_SDK_DISABLED === 'true' || e.OTEL_TRACES_EXPORTER === 'none') return undefined;
  return {
    url,
    protocol: e.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? e.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf',
    headers: { ...e.OTEL_EXPORTER_OTLP_HEADERS, ...e.OTEL_EXPORTER_OTLP_TRACES_HEADERS },
    timeoutMs: e.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ?? e.OTEL_EXPORTER_OTLP_TIMEOUT ?? 10_000,
    compression: e.OTEL_EXPORTER_OTLP_TRACES_COMPRESSION ?? e.OTEL_EXPORTER_OTLP_COMPRESSION ?? 'none',
    serviceName: e.OTEL_SERVICE_NAME,
    resourceAttributes: e.OTEL_RESOURCE_ATTRIBUTES ?? {},
    sampler: { name: e.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on', ratio: e.OTEL_TRACES_SAMPLER_ARG ?? 1 },
    batch: {
      scheduleDelayMs: e.OTEL_BSP_SCHEDULE_DELAY ?? 5000,
      exportTimeoutMs: e.OTEL_BSP_EXPORT_TIMEOUT ?? 30_000,
      maxQueueSize: e.OTEL_BSP_MAX_QUEUE_SIZE ?? 2048,
      maxExportBatchSize: e.OTEL_BSP_MAX_EXPORT_BATCH_SIZE ?? 512,
    },
    captureMessageContent: e.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT === 'true',
  };
}
