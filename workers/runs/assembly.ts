import type { Knex } from 'knex';
import type { Config } from '../../src/config.js';
import type { Logger } from '../../src/logger.js';
import { Metrics } from '../../src/metrics/registry.js';
import type { Models } from '../../src/db/models.js';
import { redisKeys } from '../../src/shared/redis-keys.js';
import type { ScriptedRedis } from '../../src/shared/redis-scripts.js';
import { leaseOptions } from '../../src/engine/protocol-types.js';
import { runProtocol } from '../../src/engine/run-protocol.js';
import type { EventStream } from '../../src/engine/event-stream.js';
import { BudgetLedger } from '../../src/budgets/ledger.js';
import { RunStore } from '../../src/engine/run-store.js';
import { WorkerEngine } from '../../src/engine/worker-engine.js';
import { RUN_QUEUE, WEBHOOK_QUEUE, producerQueue, wakeRunJob, type RunJob, type WebhookJob } from '../../src/shared/jobs.js';
import { LOCAL_MODEL } from '../../src/shared/model-settings.js';
import { searchKnowledgeBases } from '../../src/knowledge/retrieval.js';
import { knowledgeParts } from '../../src/knowledge/assembly.js';
import { buildMemoryService } from '../../src/memories/assembly.js';
import { OutboundClient } from '../../src/net/outbound.js';
import { Sealer } from '../../src/crypto/sealed.js';
import { MAX_RESPONSE_BYTES } from '../../src/connectors/mcp.js';
import { WebhookOutbox } from '../../src/webhooks/outbox.js';
import { webhookEntry } from '../../src/webhooks/service.js';
import { AuditLog, SYSTEM_ACTOR } from '../../src/audit/log.js';
import { WebhookDeliverer } from '../webhooks/deliverer.js';
import { WebhookDispatcher } from '../webhooks/dispatcher.js';
import type { ExecutorDeps } from './executor.js';
import { ToolListCache } from '../connectors/sessions.js';
import { LocalModel } from '../models/local.js';
import { RunTracer } from './telemetry.js';
import { GatewayModel } from '../models/gateway/provider.js';
import { UnconfiguredGateway } from '../models/gateway/unconfigured.js';
import type { ModelProvider } from '../models/types.js';
import type { CpuWork } from '../../src/cpu/work.js';
import { ModelImages } from '../../src/files/model-images.js';
import { PostgresFileStorage } from '../../src/files/storage.js';
import { ImageProcessor, imageLimits } from '../../src/files/images.js';

export interface WorkerClients {
  knex: Knex;
  models: Models;
  /** The worker's run-protocol connection (auto-pipelined). */
  redis: ScriptedRedis;
  logger: Logger;
  /** The process's metrics; a fresh registry when absent (benchmarks and tests that do not scrape). */
  metrics?: Metrics;
  /** CPU work on callers' schemas off the event loop (the worker's CpuPool); inline when absent (in-process tests). */
  cpu?: CpuWork;
  /** The run engine's event stream, when the caller brings its own (benchmarks time its publishes). */
  events?: EventStream;
}

/** `local` is the built-in model; every other name is a gateway model (agents naming one were refused unless a gateway is configured). */
function modelProviders(config: Config, logger: Logger, metrics: Metrics): (model: string) => ModelProvider {
  const local = new LocalModel(config.model.localTokenDelayMs, config.model.dagMaxNodes);
  const { gateway } = config.model;
  const remote = gateway.url ? new GatewayModel({ ...gateway, url: gateway.url, dagMaxNodes: config.model.dagMaxNodes }, logger, metrics) : new UnconfiguredGateway();
  return (model) => (model === LOCAL_MODEL ? local : remote);
}

/**
 * What a worker process's runs share, built once from config and live clients: the run engine
 * (its store and Redis protocol), the models, knowledge search, one outbound pool, tool-list cache and sealer for
 * connector calls, and webhook delivery (first attempts at once, retries through the queue). The
 * worker entry, benchmarks and tests all build it here.
 */
export function workerServices(config: Config, clients: WorkerClients) {
  const { knex, models, redis, logger } = clients;
  const metrics = clients.metrics ?? new Metrics(config.metrics.enabled);
  const keys = redisKeys(config.redis);
  const outbound = new OutboundClient(config.outbound, { maxResponseBytes: MAX_RESPONSE_BYTES });
  const sealer = new Sealer(config.encryptionKey, config.encryptionKeyPrevious);
  const webhookQueue = producerQueue<WebhookJob>(WEBHOOK_QUEUE, redis, keys.bullPrefix(WEBHOOK_QUEUE));
  const runQueue = producerQueue<RunJob>(RUN_QUEUE, redis, keys.bullPrefix(RUN_QUEUE));
  const outbox = new WebhookOutbox(knex, webhookQueue, config.webhooks);
  const audit = new AuditLog(knex);
  const deliverer = new WebhookDeliverer(knex, models, sealer, outbound.fetch, logger, {
    ...config.webhooks,
    onAttempt: (outcome) => metrics.webhookDeliveries.inc({ outcome }),
    onDisabled: (endpoint, reason, trx) => audit.record(SYSTEM_ACTOR, webhookEntry('webhook.disable', endpoint, { reason }), trx),
  });
  const webhooks = new WebhookDispatcher(deliverer, outbox, logger);
  const knowledge = knowledgeParts(config, knex);
  const memories = buildMemoryService(config, knex, knowledge);
  const deps: ExecutorDeps = {
    engine: new WorkerEngine(
      new RunStore(knex, models, { preparedStatements: config.databasePreparedStatements }),
      { ...runProtocol(redis, keys, leaseOptions(config.runs)), ...(clients.events && { events: clients.events }) },
      logger,
    ),
    webhooks,
    logger,
    metrics,
    now: () => new Date(),
    modelFor: modelProviders(config, logger, metrics),
    defaultModel: config.model.defaultModel,
    defaultContextWindow: config.model.defaultContextWindow,
    limits: { maxCrashes: config.runs.maxCrashes, maxEvents: config.runs.maxEvents, maxDurationMs: config.runs.maxDurationMs, approvalTimeoutMs: config.runs.approvalTimeoutMs, clientToolTimeoutMs: config.runs.clientToolTimeoutMs },
    searchKnowledge: (ids, query, topK, options) => searchKnowledgeBases(knex, knowledge.retriever, ids, query, topK, options),
    groundedMinSimilarity: config.knowledge.groundedMinSimilarity,
    memories,
    outputRepairAttempts: config.runs.outputRepairAttempts,
    cpu: clients.cpu,
    // Spans of runs (DESIGN §18) only when tracing is on; the entry point has started the SDK they go to.
    tracer: config.tracing ? new RunTracer(config.tracing) : undefined,
    images: new ModelImages(models.File, new PostgresFileStorage(knex), new ImageProcessor(imageLimits(config.files))),
    budgets: new BudgetLedger(redis, keys),
    budgetReservations: config.budgets,
    wakeRun: (runId) => wakeRunJob(runQueue, runId),
    connectors: {
      models,
      sealer,
      sessions: { fetch: outbound.fetch, cache: new ToolListCache(), timeoutMs: config.connectors.timeoutMs, maxOutputBytes: config.connectors.maxOutputBytes },
    },
  };
  return {
    deps,
    knowledge,
    memories,
    keys,
    metrics,
    outbox,
    deliverer,
    async close() {
      await webhooks.drain();
      await Promise.all([outbound.close(), webhookQueue.close(), runQueue.close()]);
    },
  };
}
export type WorkerServices = ReturnType<typeof workerServices>;
