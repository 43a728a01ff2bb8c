import * as v from 'valibot';
import { LOCAL_MODEL, type ModelFamilies } from './shared/model-settings.js';
import { tracingConfig, tracingEnv, type TracingConfig } from './telemetry/env.js';

/** The only module that reads the environment. Everything else receives a Config. */

const DEV_JWT_SECRET = 'dev-only-jwt-secret-change-me-0123456789abcdef';
const DEV_ENCRYPTION_KEY = 'dev-only-encryption-key-change-me-0123456789';

const intFrom = (min: number, max: number) =>
  v.pipe(v.string(), v.regex(/^\d+$/, 'must be a whole number'), v.transform(Number), v.minValue(min), v.maxValue(max));

const url = (protocols: string[]) =>
  v.pipe(
    v.string(),
    v.url('must be a URL'),
    v.check((s) => protocols.some((p) => s.startsWith(`${p}://`)), `must start with ${protocols.join(':// or ')}://`),
  );

/** A case-insensitive regular expression over model names. */
const pattern = v.pipe(
  v.string(),
  v.check((s) => {
    try {
      new RegExp(s, 'i');
      return true;
    } catch {
      return false;
    }
  }, 'must be a valid regular expression'),
  v.transform((s) => new RegExp(s, 'i')),
);

const originList = (s: string) => s.split(',').map((origin) => origin.trim()).filter(Boolean);
/** A browser's Origin header: scheme, host and port only (no path, no trailing slash). */
const everyOrigin = (origins: string[]) =>
  origins.every((origin) => {
    try {
      return /^https?:$/.test(new URL(origin).protocol) && new URL(origin).origin === origin;
    } catch {
      return false;
    }
  });

const EnvSchema = v.object({
  NODE_ENV: v.optional(v.picklist(['development', 'production', 'test']), 'development'),
  PORT: v.optional(intFrom(0, 65535), '3000'),
  DATABASE_URL: v.optional(url(['postgres', 'postgresql']), 'postgres://postgres@127.0.0.1:5432/agent_platform'),
  REDIS_URL: v.optional(url(['redis', 'rediss']), 'redis://127.0.0.1:6379'),
  REDIS_TLS_REJECT_UNAUTHORIZED: v.optional(v.picklist(['true', 'false']), 'true'),
  REDIS_CLUSTER_NODES: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\s*[A-Za-z0-9_.-]+:\d{1,5}\s*(,\s*[A-Za-z0-9_.-]+:\d{1,5}\s*){0,63}$/, 'must be comma-separated host:port pairs (at most 64)'),
      v.transform((s) => s.split(',').map((node) => {
        const [host, port] = node.trim().split(':') as [string, string];
        return { host, port: Number(port) };
      })),
    ),
  ),
  REDIS_KEY_PREFIX: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_:.-]{1,64}$/, 'must be 1-64 of [A-Za-z0-9_:.-]')), 'ap:'),
  JWT_SECRET: v.optional(v.pipe(v.string(), v.minLength(32, 'must be at least 32 characters'))),
  ENCRYPTION_KEY: v.optional(v.pipe(v.string(), v.minLength(32, 'must be at least 32 characters'))),
  ENCRYPTION_KEY_PREVIOUS: v.optional(v.pipe(v.string(), v.minLength(32, 'must be at least 32 characters'))),
  OUTBOUND_ALLOW_PRIVATE: v.optional(v.picklist(['true', 'false'])),
  CONNECTOR_TIMEOUT_MS: v.optional(intFrom(100, 600_000), '60000'),
  CONNECTOR_MAX_OUTPUT_BYTES: v.optional(intFrom(1024, 10 * 1024 * 1024), '65536'),
  WEBHOOK_MAX_ATTEMPTS: v.optional(intFrom(1, 20), '8'),
  WEBHOOK_RETRY_BASE_MS: v.optional(intFrom(10, 3_600_000), '5000'),
  WEBHOOK_TIMEOUT_MS: v.optional(intFrom(100, 120_000), '10000'),
  MODEL_PROVIDER: v.optional(v.picklist(['local', 'gateway']), 'local'),
  GATEWAY_URL: v.optional(url(['http', 'https'])),
  GATEWAY_API_KEY: v.optional(v.string()),
  GATEWAY_MODEL: v.optional(v.string()),
  GATEWAY_FALLBACK_MODEL: v.optional(v.string()),
  GATEWAY_MAX_RETRIES: v.optional(intFrom(0, 10), '3'),
  GATEWAY_RETRY_BASE_MS: v.optional(intFrom(1, 60_000), '500'),
  GATEWAY_RETRY_MAX_DELAY_MS: v.optional(intFrom(1, 600_000), '30000'),
  GATEWAY_IDLE_TIMEOUT_MS: v.optional(intFrom(100, 3_600_000), '300000'),
  GATEWAY_DEEP_RESEARCH_MODELS: v.optional(pattern, 'deep-research'),
  GATEWAY_MINIMAL_EFFORT_MODELS: v.optional(pattern, '^gpt-5'),
  WORKER_CONCURRENCY: v.optional(intFrom(1, 10_000), '50'),
  LOCAL_MODEL_TOKEN_DELAY_MS: v.optional(intFrom(0, 60_000), '15'),
  BUDGET_RESERVE_COMPLETION_TOKENS: v.optional(intFrom(1, 1_000_000), '1000'),
  BUDGET_RESERVATION_TTL_S: v.optional(intFrom(1, 7 * 24 * 3600), '600'),
  DEFAULT_CONTEXT_WINDOW: v.optional(intFrom(1024, 2_000_000), '128000'),
  ADMIN_EMAIL: v.optional(v.pipe(v.string(), v.email('must be an email address'))),
  ADMIN_PASSWORD: v.optional(v.pipe(v.string(), v.minLength(8, 'must be at least 8 characters'))),
  LOG_LEVEL: v.optional(v.picklist(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), 'info'),
  AGENT_PLATFORM_URL: v.optional(url(['http', 'https'])),
  AGENT_PLATFORM_API_KEY: v.optional(v.string()),
  BODY_LIMIT_BYTES: v.optional(intFrom(1024, 100 * 1024 * 1024), String(1024 * 1024)),
  BODY_IDLE_TIMEOUT_MS: v.optional(intFrom(100, 600_000), '10000'),
  CPU_POOL_THREADS: v.optional(intFrom(1, 64), '2'),
  CPU_POOL_QUEUE: v.optional(intFrom(1, 100_000), '64'),
  RUNS_PER_USER_LIMIT: v.optional(intFrom(1, 100_000), '20'),
  PARKED_RUNS_PER_USER: v.optional(intFrom(1, 100_000), '20'),
  SCHEDULE_MIN_INTERVAL_S: v.optional(intFrom(1, 7 * 24 * 3600), '60'),
  SCHEDULES_PER_USER: v.optional(intFrom(1, 100_000), '100'),
  DATASET_MAX_ITEMS: v.optional(intFrom(1, 1_000_000), '10000'),
  DATASETS_PER_USER: v.optional(intFrom(1, 1_000_000), '1000'),
  DATASET_UPLOAD_MAX_BYTES: v.optional(intFrom(1024, 1024 * 1024 * 1024), String(10 * 1024 * 1024)),
  EVALS_ACTIVE_PER_USER: v.optional(intFrom(1, 10_000), '10'),
  EVAL_DRIVERS_PER_WORKER: v.optional(intFrom(1, 1000), '16'),
  MEMORIES_PER_USER: v.optional(intFrom(1, 10_000_000), '10000'),
  MEMORY_RECALL_K: v.optional(intFrom(1, 50), '3'),
  MEMORY_EMBEDDING_MODEL: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1)), 'local'),
  CONVERSATION_RETENTION_DAYS: v.optional(intFrom(1, 36_500)),
  DEFAULT_RATE_LIMIT_RPM: v.optional(intFrom(1, 100_000)),
  RUN_MAX_CRASHES: v.optional(intFrom(1, 100), '3'),
  // Below the stream's MAXLEN (20,000), so a run's whole stream can always be replayed.
  RUN_MAX_EVENTS: v.optional(intFrom(10, 19_000), '10000'),
  RUN_MAX_DURATION_S: v.optional(intFrom(1, 7 * 24 * 3600), '3600'),
  RUN_STREAM_TTL_S: v.optional(intFrom(1, 7 * 24 * 3600), '3600'),
  RUN_QUEUE_PER_CONVERSATION: v.optional(intFrom(1, 100), '10'),
  APPROVAL_TIMEOUT_S: v.optional(intFrom(1, 30 * 24 * 3600), '86400'),
  CLIENT_TOOL_TIMEOUT_S: v.optional(intFrom(1, 30 * 24 * 3600), '600'),
  JOB_LOCK_MS: v.optional(intFrom(1000, 600_000), '30000'),
  OUTPUT_REPAIR_ATTEMPTS: v.optional(intFrom(0, 5), '1'),
  JOB_STALLED_INTERVAL_MS: v.optional(intFrom(500, 600_000), '15000'),
  SHUTDOWN_TIMEOUT_MS: v.optional(intFrom(1000, 120_000), '25000'),
  KB_ANN_MIN_CHUNKS: v.optional(intFrom(1, 100_000_000), '20000'),
  KB_HNSW_EF_SEARCH: v.optional(intFrom(1, 1000), '200'),
  KB_HNSW_BUILD_MEMORY_MB: v.optional(intFrom(64, 65_536), '512'),
  KB_GROUNDED_MIN_SIMILARITY: v.optional(v.pipe(v.string(), v.transform(Number), v.number('must be a number'), v.minValue(-1), v.maxValue(1)), '0.3'),
  KB_EMBEDDING_BATCH: v.optional(intFrom(1, 2048), '64'),
  KB_DOCUMENT_MAX_PAGES: v.optional(intFrom(1, 100_000), '2000'),
  KB_PARSE_TIMEOUT_MS: v.optional(intFrom(1000, 3_600_000), '60000'),
  KB_DOCUMENT_MAX_BYTES: v.optional(intFrom(1024, 1024 * 1024 * 1024), String(10 * 1024 * 1024)),
  FILE_MAX_BYTES: v.optional(intFrom(1024, 1024 * 1024 * 1024), String(20 * 1024 * 1024)),
  FILE_QUOTA_BYTES: v.optional(intFrom(1024, Number.MAX_SAFE_INTEGER), String(1024 * 1024 * 1024)),
  IMAGE_MAX_SIDE: v.optional(intFrom(16, 16_384), '2048'),
  IMAGE_MAX_PIXELS: v.optional(intFrom(1, 1_000_000_000), '50000000'),
  IMAGE_CONCURRENCY: v.optional(intFrom(1, 64), '2'),
  UPLOADS_PER_USER: v.optional(intFrom(1, 1000), '2'),
  TRUST_PROXY_HOPS: v.optional(intFrom(0, 10)),
  DATABASE_POOL_MAX: v.optional(intFrom(1, 1000)),
  WEB_DATABASE_POOL_MAX: v.optional(intFrom(1, 1000)),
  WORKER_DATABASE_POOL_MAX: v.optional(intFrom(1, 1000)),
  DATABASE_PREPARED_STATEMENTS: v.optional(v.picklist(['true', 'false']), 'true'),
  DAG_MAX_NODES: v.optional(intFrom(2, 256), '16'),
  CORS_ORIGINS: v.optional(v.pipe(v.string(), v.transform(originList), v.check(everyOrigin, 'must be comma-separated origins like https://app.example.com'))),
  METRICS_TOKEN: v.optional(v.pipe(v.string(), v.minLength(16, 'must be at least 16 characters'))),
  METRICS_ENABLED: v.optional(v.picklist(['true', 'false']), 'true'),
  WORKER_METRICS_PORT: v.optional(intFrom(0, 65535)),
  LOG_FORMAT: v.optional(v.picklist(['json', 'pretty'])),
  // OpenTelemetry traces (DESIGN §18): the standard OTEL_* variables, read here like every other.
  ...tracingEnv,
});

/** Default pool sizes: the web's requests hold a connection for a query at a time; a worker's runs touch Postgres between model calls. */
const DEFAULT_WEB_POOL_MAX = 10;
const defaultWorkerPoolMax = (concurrency: number) => Math.max(2, Math.min(20, concurrency));

export type Env = Record<string, string | undefined>;

export interface GatewayConfig {
  url?: string;
  /** Absent: the gateway takes no key (a local Ollama or vLLM), and no Authorization header is sent. */
  apiKey?: string;
  model?: string;
  fallbackModel?: string;
  /** Retries after the first attempt for 429, 500 and 503 (and unreachable or silent gateways). */
  maxRetries: number;
  /** The first backoff; it doubles per retry, with jitter. */
  retryBaseMs: number;
  /** The longest single wait, Retry-After included; a gateway asking for more is not retried. */
  retryMaxDelayMs: number;
  /** Longest silence allowed before the response starts and between its chunks (not a total: reasoning runs are long). */
  idleTimeoutMs: number;
  families: ModelFamilies;
}

export interface FilesConfig {
  /** Largest upload; more → 413. */
  maxBytes: number;
  /** A user's files together; more → 413 naming the quota. */
  quotaBytes: number;
  /** A model is sent images no larger than this on their longer side (larger ones are downscaled). */
  imageMaxSide: number;
  /** Most pixels an image may declare: a decompression bomb is refused before it is decoded. */
  imageMaxPixels: number;
  /** Images decoded at once per process; uploads beyond four times this many waiting → 429. */
  imageConcurrency: number;
  /** Uploads in progress at once per user (multipart and /v1 inline images alike), under the per-process bound; more → 429. */
  uploadsPerUser: number;
}

export interface Config {
  nodeEnv: 'development' | 'production' | 'test';
  port: number;
  databaseUrl: string;
  /**
   * `clusterNodes` (REDIS_CLUSTER_NODES) switches every process to a Redis Cluster (DESIGN §13): the
   * nodes to discover it from; REDIS_URL then only supplies credentials and TLS (rediss://).
   */
  redis: { url: string; tlsRejectUnauthorized: boolean; keyPrefix: string; clusterNodes: { host: string; port: number }[] };
  jwt: { secret: string; issuer: string; audience: string; accessTtlSeconds: number; refreshTtlSeconds: number };
  encryptionKey: string;
  /** The key before the last rotation: still opens sealed values until `agentctl secrets:rotate` has re-sealed them. */
  encryptionKeyPrevious?: string;
  /** Outbound calls to servers users choose (connectors, webhooks): whether private and loopback addresses may be reached. */
  outbound: { allowPrivate: boolean };
  connectors: { timeoutMs: number; maxOutputBytes: number };
  /**
   * Webhook deliveries (DESIGN §10): attempts per delivery; the first retry waits `retryBaseMs` and
   * each next one four times longer (the defaults spread 8 attempts over about a day); each attempt's limit.
   */
  webhooks: { maxAttempts: number; retryBaseMs: number; timeoutMs: number };
  model: {
    provider: 'local' | 'gateway';
    localTokenDelayMs: number;
    /** The model of runs without an agent, and of new agents that name none. */
    defaultModel: string;
    gateway: GatewayConfig;
    /** Most nodes a DAG plan may have, the synthesis included; planners merge the rest into the last task. */
    dagMaxNodes: number;
    /** DESIGN §20: the context window of gateway models whose agent sets no `context_window` (local: 8,192). */
    defaultContextWindow: number;
  };
  /** Postgres connections per process, by the role of the process that reads them. */
  databasePoolMax: { web: number; worker: number };
  /** The run path's statements prepared once per connection (off behind PgBouncer < 1.21 in transaction mode). */
  databasePreparedStatements: boolean;
  /** Proxies in front of the web whose X-Forwarded-For entries are trusted (Heroku: 1); 0 = the socket address. */
  trustProxyHops: number;
  workerConcurrency: number;
  admin?: { email: string; password: string };
  logLevel: string;
  bodyLimitBytes: number;
  /** DESIGN §21: a request body that sends nothing for this long is dropped (408) and what it held is returned. */
  bodyIdleTimeoutMs: number;
  /** DESIGN §21: the web's worker threads for CPU work on request data, and the tasks that may wait for one (more → 429). */
  cpuPool: { threads: number; queue: number };
  /** DESIGN §18: requests per minute of credentials whose key and user set no `rate_limit_rpm`; null = not limited. */
  defaultRateLimitRpm: number | null;
  runs: {
    /** Concurrently active (queued or running) runs per user; more → 429. */
    perUserLimit: number;
    /** Runs carrying client tools (they may park `requires_action`, DESIGN §23) a user may have unfinished at once; more → 429. */
    parkedPerUser: number;
    /** Worker deaths a run survives (it resumes from its checkpoint); one more fails it. */
    maxCrashes: number;
    /** Events a run may publish (its end aside) before it fails with `run_max_events`. */
    maxEvents: number;
    /** Time a run may spend running (waiting for approval aside) before it fails with `run_max_duration`. */
    maxDurationMs: number;
    /** How long a finished run's event stream stays in Redis for re-joins; its outcome stays in Postgres for good. */
    streamTtlSeconds: number;
    /** Runs that may wait (multitask_strategy enqueue, interrupt, rollback) on one conversation's active run; more → 429. */
    queuePerConversation: number;
    /** How long a tool call waits for a person's decision before the run fails with `approval_timeout`. */
    approvalTimeoutMs: number;
    /** How long a run waits for its client's tool outputs (DESIGN §23) before it fails with `client_tool_timeout`. */
    clientToolTimeoutMs: number;
    /** BullMQ job lock; a dead worker's run is picked up again within about this long. */
    jobLockMs: number;
    /** DESIGN §23: times the model is asked again, with the errors, for an answer its output schema refuses. */
    outputRepairAttempts: number;
    stalledIntervalMs: number;
  };
  /** DESIGN §19: the shortest gap between a schedule's ticks (cron or every_seconds), and how many schedules a user may have. */
  /** Token budgets' reservations of model calls in flight (DESIGN §21). */
  budgets: { reserveCompletionTokens: number; reservationTtlMs: number };
  schedules: { minIntervalSeconds: number; perUser: number };
  /** DESIGN §24: items per dataset, datasets per user, the largest items upload, evals queued or running per user, and evals one worker process drives at once. */
  evals: { maxItems: number; perUser: number; uploadMaxBytes: number; activePerUser: number; driversPerWorker: number };
  /** DESIGN §25: memories a user may keep, how many the run is given before it starts (and recall returns), and the model that embeds them (`local` or a gateway embedding model). */
  memory: { perUser: number; recallK: number; embeddingModel: string };
  /** DESIGN §20: conversations idle (not updated) this many days are deleted by the workers' retention job; null: kept for ever. */
  conversations: { retentionDays: number | null };
  /** Largest knowledge-base document accepted (multipart uploads; JSON bodies are bound by BODY_LIMIT_BYTES). */
  kbDocumentMaxBytes: number;
  knowledge: {
    /** A knowledge base this large gets an HNSW index where pgvector is installed (smaller ones are scanned exactly). */
    annMinChunks: number;
    /** pgvector's hnsw.ef_search for semantic queries: higher finds more of the true neighbours, slower. */
    efSearch: number;
    /** maintenance_work_mem of an HNSW index build. */
    buildMemoryMb: number;
    /** Texts per gateway /v1/embeddings request. */
    embeddingBatch: number;
    /** doc_mode grounded: a passage found only by vector search counts when at least this similar (cosine). */
    groundedMinSimilarity: number;
    /** Most pages a PDF may have; more → the document fails (before any page is read). */
    maxPages: number;
    /** How long reading one PDF or DOCX may take in the worker. */
    parseTimeoutMs: number;
  };
  /** Uploaded files (DESIGN §15): images only. */
  files: FilesConfig;
  /** How long SIGTERM may take before the process exits anyway (Heroku allows 30 s). */
  shutdownTimeoutMs: number;
  /** Where agentctl's client commands (run, inject) send requests. */
  client: { url: string; apiKey?: string };
  /** Browser origins allowed to call the API (DESIGN §12); empty = no CORS headers at all. */
  corsOrigins: string[];
  metrics: {
    /** Off: no request timing, no default process metrics, no /metrics (benchmarks compare both). */
    enabled: boolean;
    /** A bearer token scrapers send; unset → an admin credential is needed instead. */
    token?: string;
    /** Where the worker serves its metrics; unset → not served. */
    workerPort?: number;
  };
  /** `json` or `pretty` log lines; unset → web and worker write JSON, `npm start` pretty-prints them. */
  logFormat?: 'json' | 'pretty';
  /** OpenTelemetry traces over OTLP/HTTP (DESIGN §18); undefined (no endpoint set): tracing is off. */
  tracing?: TracingConfig;
  /** Warnings about development defaults in use, printed once by entry points. */
  warnings: string[];
}

export class ConfigError extends Error {}

/** Parses an environment (default: process.env). Throws ConfigError with one line naming the variable. */
export function loadConfig(env: Env = process.env): Config {
  const raw = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = v.safeParse(EnvSchema, raw);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const name = issue.path?.map((p) => String(p.key)).join('.') ?? 'environment';
    throw new ConfigError(`Invalid configuration: ${name} ${issue.message}`);
  }
  const e = parsed.output;
  const production = e.NODE_ENV === 'production';
  const warnings: string[] = [];
  const required = (name: 'JWT_SECRET' | 'ENCRYPTION_KEY', devValue: string): string => {
    const value = e[name];
    if (value) return value;
    if (production) throw new ConfigError(`Invalid configuration: ${name} is required when NODE_ENV=production`);
    warnings.push(`${name} is not set: using a development-only value. Set it before exposing this service.`);
    return devValue;
  };
  // The platform appends /v1/…; an address copied from a client's settings (…/v1) would call /v1/v1/… and 404.
  if (e.GATEWAY_URL && /\/v1\/?$/.test(new URL(e.GATEWAY_URL).pathname)) {
    throw new ConfigError(`Invalid configuration: GATEWAY_URL is the base address without /v1: use ${e.GATEWAY_URL.replace(/\/v1\/?$/, '')}`);
  }
  for (const name of ['GATEWAY_URL', 'GATEWAY_MODEL'] as const) {
    if (e.MODEL_PROVIDER === 'gateway' && !e[name]) throw new ConfigError(`Invalid configuration: ${name} is required when MODEL_PROVIDER=gateway`);
  }
  if (Boolean(e.ADMIN_EMAIL) !== Boolean(e.ADMIN_PASSWORD)) {
    throw new ConfigError('Invalid configuration: ADMIN_EMAIL and ADMIN_PASSWORD must be set together');
  }
  return {
    nodeEnv: e.NODE_ENV,
    port: e.PORT,
    databaseUrl: e.DATABASE_URL,
    redis: {
      url: e.REDIS_URL,
      tlsRejectUnauthorized: e.REDIS_TLS_REJECT_UNAUTHORIZED === 'true',
      keyPrefix: e.REDIS_KEY_PREFIX,
      clusterNodes: e.REDIS_CLUSTER_NODES ?? [],
    },
    jwt: {
      secret: required('JWT_SECRET', DEV_JWT_SECRET),
      issuer: 'agent-platform',
      audience: 'agent-platform-api',
      accessTtlSeconds: 7200,
      refreshTtlSeconds: 30 * 24 * 3600,
    },
    encryptionKey: required('ENCRYPTION_KEY', DEV_ENCRYPTION_KEY),
    encryptionKeyPrevious: e.ENCRYPTION_KEY_PREVIOUS,
    outbound: { allowPrivate: (e.OUTBOUND_ALLOW_PRIVATE ?? (production ? 'false' : 'true')) === 'true' },
    connectors: { timeoutMs: e.CONNECTOR_TIMEOUT_MS, maxOutputBytes: e.CONNECTOR_MAX_OUTPUT_BYTES },
    webhooks: { maxAttempts: e.WEBHOOK_MAX_ATTEMPTS, retryBaseMs: e.WEBHOOK_RETRY_BASE_MS, timeoutMs: e.WEBHOOK_TIMEOUT_MS },
    model: {
      provider: e.MODEL_PROVIDER,
      localTokenDelayMs: e.LOCAL_MODEL_TOKEN_DELAY_MS,
      defaultModel: e.MODEL_PROVIDER === 'gateway' ? e.GATEWAY_MODEL! : LOCAL_MODEL,
      gateway: {
        url: e.GATEWAY_URL,
        apiKey: e.GATEWAY_API_KEY || undefined,
        model: e.GATEWAY_MODEL,
        fallbackModel: e.GATEWAY_FALLBACK_MODEL,
        maxRetries: e.GATEWAY_MAX_RETRIES,
        retryBaseMs: e.GATEWAY_RETRY_BASE_MS,
        retryMaxDelayMs: e.GATEWAY_RETRY_MAX_DELAY_MS,
        idleTimeoutMs: e.GATEWAY_IDLE_TIMEOUT_MS,
        families: { deepResearch: e.GATEWAY_DEEP_RESEARCH_MODELS, minimalEffort: e.GATEWAY_MINIMAL_EFFORT_MODELS },
      },
      dagMaxNodes: e.DAG_MAX_NODES,
      defaultContextWindow: e.DEFAULT_CONTEXT_WINDOW,
    },
    databasePoolMax: {
      web: e.WEB_DATABASE_POOL_MAX ?? e.DATABASE_POOL_MAX ?? DEFAULT_WEB_POOL_MAX,
      worker: e.WORKER_DATABASE_POOL_MAX ?? e.DATABASE_POOL_MAX ?? defaultWorkerPoolMax(e.WORKER_CONCURRENCY),
    },
    databasePreparedStatements: e.DATABASE_PREPARED_STATEMENTS === 'true',
    // Heroku's router appends the address it saw; a production deploy elsewhere sets its own count.
    trustProxyHops: e.TRUST_PROXY_HOPS ?? (production ? 1 : 0),
    workerConcurrency: e.WORKER_CONCURRENCY,
    admin: e.ADMIN_EMAIL && e.ADMIN_PASSWORD ? { email: e.ADMIN_EMAIL, password: e.ADMIN_PASSWORD } : undefined,
    logLevel: e.LOG_LEVEL,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    bodyIdleTimeoutMs: e.BODY_IDLE_TIMEOUT_MS,
    cpuPool: { threads: e.CPU_POOL_THREADS, queue: e.CPU_POOL_QUEUE },
    defaultRateLimitRpm: e.DEFAULT_RATE_LIMIT_RPM ?? null,
    runs: {
      perUserLimit: e.RUNS_PER_USER_LIMIT,
      parkedPerUser: e.PARKED_RUNS_PER_USER,
      maxCrashes: e.RUN_MAX_CRASHES,
      maxEvents: e.RUN_MAX_EVENTS,
      maxDurationMs: e.RUN_MAX_DURATION_S * 1000,
      streamTtlSeconds: e.RUN_STREAM_TTL_S,
      queuePerConversation: e.RUN_QUEUE_PER_CONVERSATION,
      approvalTimeoutMs: e.APPROVAL_TIMEOUT_S * 1000,
      clientToolTimeoutMs: e.CLIENT_TOOL_TIMEOUT_S * 1000,
      jobLockMs: e.JOB_LOCK_MS,
      outputRepairAttempts: e.OUTPUT_REPAIR_ATTEMPTS,
      stalledIntervalMs: e.JOB_STALLED_INTERVAL_MS,
    },
    budgets: { reserveCompletionTokens: e.BUDGET_RESERVE_COMPLETION_TOKENS, reservationTtlMs: e.BUDGET_RESERVATION_TTL_S * 1000 },
    schedules: { minIntervalSeconds: e.SCHEDULE_MIN_INTERVAL_S, perUser: e.SCHEDULES_PER_USER },
    evals: { maxItems: e.DATASET_MAX_ITEMS, perUser: e.DATASETS_PER_USER, uploadMaxBytes: e.DATASET_UPLOAD_MAX_BYTES, activePerUser: e.EVALS_ACTIVE_PER_USER, driversPerWorker: e.EVAL_DRIVERS_PER_WORKER },
    memory: { perUser: e.MEMORIES_PER_USER, recallK: e.MEMORY_RECALL_K, embeddingModel: e.MEMORY_EMBEDDING_MODEL },
    conversations: { retentionDays: e.CONVERSATION_RETENTION_DAYS ?? null },
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    files: {
      maxBytes: e.FILE_MAX_BYTES,
      quotaBytes: e.FILE_QUOTA_BYTES,
      imageMaxSide: e.IMAGE_MAX_SIDE,
      imageMaxPixels: e.IMAGE_MAX_PIXELS,
      imageConcurrency: e.IMAGE_CONCURRENCY,
      uploadsPerUser: e.UPLOADS_PER_USER,
    },
    kbDocumentMaxBytes: e.KB_DOCUMENT_MAX_BYTES,
    knowledge: {
      annMinChunks: e.KB_ANN_MIN_CHUNKS,
      efSearch: e.KB_HNSW_EF_SEARCH,
      buildMemoryMb: e.KB_HNSW_BUILD_MEMORY_MB,
      embeddingBatch: e.KB_EMBEDDING_BATCH,
      groundedMinSimilarity: e.KB_GROUNDED_MIN_SIMILARITY,
      maxPages: e.KB_DOCUMENT_MAX_PAGES,
      parseTimeoutMs: e.KB_PARSE_TIMEOUT_MS,
    },
    corsOrigins: e.CORS_ORIGINS ?? [],
    metrics: { enabled: e.METRICS_ENABLED === 'true', token: e.METRICS_TOKEN, workerPort: e.WORKER_METRICS_PORT },
    logFormat: e.LOG_FORMAT,
    tracing: tracingConfig(e),
    client: { url: e.AGENT_PLATFORM_URL ?? `http://localhost:${e.PORT}`, apiKey: e.AGENT_PLATFORM_API_KEY },
    warnings,
  };
}

/** For process entry points: load or print one line and exit. */
export function loadConfigOrExit(env: Env = process.env): Config {
  try {
    return loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}
