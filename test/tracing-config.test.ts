import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { boundedMessages } from '../workers/runs/telemetry.js';

/** The OTEL_* variables (DESIGN §18) as src/config.ts reads them: tracing is off unless an endpoint is set. */
describe('tracing configuration', () => {
  it('is off without an OTLP endpoint, or with the SDK disabled or the exporter none', () => {
    expect(loadConfig({}).tracing).toBeUndefined();
    expect(loadConfig({ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' }).tracing).toBeUndefined();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'TRUE' }).tracing).toBeUndefined();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }).tracing).toBeUndefined();
    // An empty value counts as unset, as for every variable.
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: '' }).tracing).toBeUndefined();
  });

  it('defaults: http/protobuf, parent-based always-on, 5 s batches, no content; the base endpoint gets /v1/traces', () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing).toEqual({
      url: 'http://collector:4318/v1/traces',
      protocol: 'http/protobuf',
      headers: {},
      timeoutMs: 10_000,
      compression: 'none',
      serviceName: undefined,
      resourceAttributes: {},
      sampler: { name: 'parentbased_always_on', ratio: 1 },
      batch: { scheduleDelayMs: 5000, exportTimeoutMs: 30_000, maxQueueSize: 2048, maxExportBatchSize: 512 },
      captureMessageContent: false,
    });
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example.test/base/' }).tracing!.url).toBe('https://otlp.example.test/base/v1/traces');
  });

  it('the traces-specific variables win; headers merge; values are percent-decoded', () => {
    const tracing = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example.test/otlp/v1/traces',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Basic%20dXNlcjpwYXNz==, x-team=a',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-team=b',
      OTEL_EXPORTER_OTLP_TIMEOUT: '2000',
      OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: 'gzip',
      OTEL_SERVICE_NAME: 'agents',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=prod,service.namespace=ai',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
    }).tracing!;
    expect(tracing).toMatchObject({
      url: 'https://traces.example.test/otlp/v1/traces',
      protocol: 'http/json',
      headers: { authorization: 'Basic dXNlcjpwYXNz==', 'x-team': 'b' },
      timeoutMs: 2000,
      compression: 'gzip',
      serviceName: 'agents',
      resourceAttributes: { 'deployment.environment.name': 'prod', 'service.namespace': 'ai' },
      sampler: { name: 'parentbased_traceidratio', ratio: 0.25 },
      batch: { scheduleDelayMs: 100 },
      captureMessageContent: true,
    });
  });

  it.each([
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'collector:4318'],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'grpc://collector:4317'],
    ['OTEL_EXPORTER_OTLP_PROTOCOL', 'grpc'],
    ['OTEL_EXPORTER_OTLP_HEADERS', 'no-equals-sign'],
    ['OTEL_EXPORTER_OTLP_HEADERS', 'bad header=1'],
    ['OTEL_EXPORTER_OTLP_HEADERS', 'x=%E0%A4%A'],
    ['OTEL_TRACES_SAMPLER', 'jaeger_remote'],
    ['OTEL_TRACES_SAMPLER_ARG', '1.5'],
    ['OTEL_TRACES_SAMPLER_ARG', 'half'],
    ['OTEL_BSP_SCHEDULE_DELAY', '-1'],
    ['OTEL_EXPORTER_OTLP_COMPRESSION', 'zstd'],
    ['OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT', 'yes'],
  ])('%s=%s stops the process with one line naming the variable', (name, value) => {
    const load = () => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', [name]: value });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(new RegExp(`^Invalid configuration: ${name} `));
  });
});

describe('recorded message content', () => {
  const message = (content: string) => ({ role: 'user', parts: [{ type: 'text', content }] });

  it('cuts long parts, then leaves out the oldest messages, to stay within 32 KiB', () => {
    const many = Array.from({ length: 40 }, (_, i) => `message ${i} ${'x'.repeat(3000)}`);
    const recorded = boundedMessages((max) => many.map((text) => message(text.length > max ? `${text.slice(0, max)}…[truncated]` : text)));
    expect(recorded.length).toBeLessThanOrEqual(32 * 1024);
    const kept = JSON.parse(recorded) as { parts: { content: string }[] }[];
    expect(kept.length).toBeGreaterThan(1);
    expect(kept.at(-1)!.parts[0]!.content).toMatch(/^message 39 /);
  });

  it('keeps everything when it fits', () => {
    expect(JSON.parse(boundedMessages(() => [message('a'), message('b')]))).toEqual([message('a'), message('b')]);
  });
});
