import type { Knex } from 'knex';
import type { Config } from './config.js';
import type { Logger } from './logger.js';
import { bindModels } from './db/models.js';
import { redisKeys, type ScriptedRedis } from './shared/redis-keys.js';
import type { RedisClient } from './shared/redis-scripts.js';
import { JwtService } from './auth/jwt.js';
import { CredentialCache } from './auth/cache.js';
import { UsageRecorder } from './auth/usage.js';
import { Authenticator } from './auth/authenticator.js';
import { SessionService } from './auth/sessions.js';
import { LoginThrottle, DEFAULT_THROTTLE, type ThrottleLimits } from './auth/throttle.js';
import { ApiKeyService } from './auth/api-keys.js';
import { BudgetLedger } from './budgets/ledger.js';
import { RateLimiter } from './limits/rate-limits.js';
import { INGEST_QUEUE, RUN_QUEUE, WEBHOOK_QUEUE, producerQueue, type IngestJob, type RunJob, type WebhookJob } from './shared/jobs.js';
import { WebhookService } from './webhooks/service.js';
import { WebhookOutbox } from './webhooks/outbox.js';
import { KnowledgeService } from './knowledge/service.js';
import { knowledgeParts as buildKnowledgeParts } from './knowledge/assembly.js';
import { buildWebEngine } from './engine/web-engine.js';
import { RunService, runLimits } from './runs/service.js';
import { EventRelay } from './runs/relay.js';
import type { SseStream } from './http/sse.js';
import { Sealer } from './crypto/sealed.js';
import { ConnectorService } from './connectors/service.js';
import { AgentService } from './agents/service.js';
import type { LookupFunction } from './net/outbound.js';
import { ConversationService } from './conversations/service.js';
import { ConversationEraser } from './conversations/erase.js';
import { AuditLog } from './audit/log.js';
import { UserAdminService } from './admin/users.js';
import { RunReports } from './admin/runs.js';
import { ModelPriceService } from './admin/model-prices.js';
import { QueueStats } from './admin/queues.js';
import { DashboardTickets } from './admin/dashboard-tickets.js';
import { Metrics } from './metrics/registry.js';
import { FileService } from './files/service.js';
import { PostgresFileStorage } from './files/storage.js';
import { ImageProcessor, imageLimits } from './files/images.js';
import { SCHEDULE_QUEUE, type ScheduleTick } from './shared/jobs.js';
import { ScheduleService } from './schedules/service.js';
import { ScheduleStore } from './schedules/store.js';
import { TickScheduler } from './schedules/scheduler.js';
import { inlineCpu, type CpuWork } from './cpu/work.js';
import { EVAL_QUEUE, type EvalJob } from './shared/jobs.js';
import { DatasetService } from './evals/datasets.js';
import { EvalService } from './evals/service.js';
import { buildMemoryService } from './memories/assembly.js';

/** The metric gauges read queue counts this often at most (DESIGN §12). */
const METRICS_QUEUE_TTL_MS = 5000;

export interface IdentityClients {
  config: Config;
  knex: Knex;
  /** Command connection (fail-fast on the web tier); BullMQ's queue shares it. */
  redis: ScriptedRedis;
  logger: Logger;
}

export interface Clients extends IdentityClients {
  /** The shared subscriber (doorbells, credential invalidations). */
  subscriber: RedisClient;
  /** Reads run streams for the relay; waits out outages instead of failing fast. */
  reader: RedisClient;
  /** The process's metrics; a fresh registry when absent (tests that do not scrape). */
  metrics?: Metrics;
  /** CPU work on request data off the event loop (DESIGN §21): the web's CpuPool; inline when absent (in-process tests). */
  cpu?: CpuWork;
}

export interface ServiceOptions {
  throttle?: ThrottleLimits;
  /** Name resolution for save-time destination checks (agents' gateway mcp servers); the system resolver when absent. */
  lookup?: LookupFunction;
}

/** Users, keys and sessions: all that the CLI and first boot need. */
export function buildIdentityServices(clients: IdentityClients, options: ServiceOptions = {}) {
  const { config, knex, redis, logger } = clients;
  const models = bindModels(knex);
  const keys = redisKeys(config.redis);
  const jwt = new JwtService(config.jwt);
  const cache = new CredentialCache(redis, keys.authInvalidationChannel);
  const usage = new UsageRecorder(knex, (err) => logger.warn({ err }, 'could not record API key usage'));
  const authenticator = new Authenticator(models, jwt, cache, usage, { defaultRateLimitRpm: config.defaultRateLimitRpm });
  const throttle = new LoginThrottle(redis, keys, options.throttle ?? DEFAULT_THROTTLE);
  const audit = new AuditLog(knex);
  const sessions = new SessionService(models, jwt, throttle, cache, config.jwt.refreshTtlSeconds, audit);
  // Token budgets' counters (DESIGN §18): read by the records that show them and by every run's start.
  const budgets = new BudgetLedger(redis, keys);
  const apiKeys = new ApiKeyService(models, cache, usage, audit, budgets);
  const queue = producerQueue<RunJob>(RUN_QUEUE, redis, keys.bullPrefix(RUN_QUEUE));
  // The web's one run engine: runs, their streams, erasures and administration act on runs only through it.
  const engine = buildWebEngine({ knex, models, redis, keys, queue }, { runs: config.runs, preparedStatements: config.databasePreparedStatements });
  const userAdmin = new UserAdminService(knex, models, cache, audit, engine, budgets);
  // Request rate limits (DESIGN §18): one Redis script per request of a limited credential.
  const rateLimiter = new RateLimiter(redis, keys);
  return { ...clients, models, keys, jwt, cache, usage, authenticator, sessions, apiKeys, audit, engine, queue, userAdmin, budgets, rateLimiter };
}

/** Wires the web tier's services from live clients. Entry points and tests both call this. */
export function buildServices(clients: Clients, options: ServiceOptions = {}) {
  const identity = buildIdentityServices(clients, options);
  const { knex, redis, subscriber, reader, logger } = clients;
  const { models, keys, engine, audit, budgets, queue } = identity;
  const metrics = clients.metrics ?? new Metrics(clients.config.metrics.enabled);
  const cpu = clients.cpu ?? inlineCpu;
  const files = new FileService(knex, models.File, new PostgresFileStorage(knex), new ImageProcessor(imageLimits(clients.config.files)), clients.config.files);
  const conversations = new ConversationService(models, files);
  // DESIGN §20: DELETE /api/conversations/{id} (the workers' retention job builds its own).
  const conversationEraser = new ConversationEraser(knex, engine, audit);
  const runs = new RunService(models, conversations, files, engine, runLimits(clients.config), audit, metrics, budgets, cpu);
  const relay = new EventRelay(subscriber, reader, engine.streams, (err) => logger.warn({ err }, 'event relay read failed'));
  const openStreams = new Set<SseStream>();
  const ingestQueue = producerQueue<IngestJob>(INGEST_QUEUE, redis, keys.bullPrefix(INGEST_QUEUE));
  const knowledgeParts = buildKnowledgeParts(clients.config, knex);
  const knowledge = new KnowledgeService(knex, models, ingestQueue, knowledgeParts.models, knowledgeParts.retriever, knowledgeParts.vectors);
  const sealer = new Sealer(clients.config.encryptionKey, clients.config.encryptionKeyPrevious);
  const webhookQueue = producerQueue<WebhookJob>(WEBHOOK_QUEUE, redis, keys.bullPrefix(WEBHOOK_QUEUE));
  const webhooks = new WebhookService(models, sealer, new WebhookOutbox(knex, webhookQueue, clients.config.webhooks), audit);
  const connectors = new ConnectorService(knex, models, sealer, { outbound: clients.config.outbound, timeoutMs: clients.config.connectors.timeoutMs }, audit);
  const { model, outbound } = clients.config;
  const runReports = new RunReports(knex, models);
  // Schedules (DESIGN §19): their timers are BullMQ job schedulers on a queue of their own, which workers listen to.
  const scheduleQueue = producerQueue<ScheduleTick>(SCHEDULE_QUEUE, redis, keys.bullPrefix(SCHEDULE_QUEUE));
  const schedules = new ScheduleService(new ScheduleStore(knex, models), new TickScheduler(scheduleQueue, redis), runs, models, clients.config.schedules);
  // Deleting an agent switches its schedules off (DESIGN §20).
  const agents = new AgentService(models, knowledge, connectors, { defaultModel: model.defaultModel, gateway: model.gateway, outbound, lookup: options.lookup }, schedules);
  const modelPrices = new ModelPriceService(knex, audit);
  const evalQueue = producerQueue<EvalJob>(EVAL_QUEUE, redis, keys.bullPrefix(EVAL_QUEUE));
  const queues = [queue, ingestQueue, webhookQueue, evalQueue];
  const queueStats = new QueueStats(queues);
  // The console opens the queue dashboard with a one-time ticket instead of a pasted credential (DESIGN §17).
  const dashboardTickets = new DashboardTickets(redis, keys);
  const metricQueueStats = new QueueStats(queues, METRICS_QUEUE_TTL_MS);
  metrics.watch({ openStreams: () => openStreams.size, queueCounts: () => metricQueueStats.counts() });
  // DESIGN §24: datasets, and evals driven by the workers' eval queue.
  const datasets = new DatasetService(knex, { maxItems: clients.config.evals.maxItems, perUser: clients.config.evals.perUser });
  const evals = new EvalService(knex, evalQueue, (userId, runId) => runs.cancel(userId, runId), { activePerUser: clients.config.evals.activePerUser, gateway: Boolean(clients.config.model.gateway.url) });
  // DESIGN §25: the user's memories, embedded by MEMORY_EMBEDDING_MODEL.
  const memories = buildMemoryService(clients.config, knex, knowledgeParts);
  return { ...identity, ...clients, metrics, cpu, queue, ingestQueue, runs, relay, openStreams, knowledge, knowledgeParts, connectors, agents, conversations, conversationEraser, files, webhooks, runReports, modelPrices, queueStats, dashboardTickets, webhookQueue, queues, schedules, scheduleQueue, datasets, evals, evalQueue, memories };
}
export type Services = ReturnType<typeof buildServices>;
