import type { Knex } from 'knex';
import type { Config } from '../src/config.js';
import type { Models } from '../src/db/models.js';
import { Metrics } from '../src/metrics/registry.js';
import { redisKeys } from '../src/shared/redis-keys.js';
import type { ScriptedRedis } from '../src/shared/redis-scripts.js';
import type { WebEngine } from '../src/engine/web-engine.js';
import { RunService, runLimits } from '../src/runs/service.js';
import { ConversationService } from '../src/conversations/service.js';
import { FileService } from '../src/files/service.js';
import { PostgresFileStorage } from '../src/files/storage.js';
import { ImageProcessor, imageLimits } from '../src/files/images.js';
import { AuditLog } from '../src/audit/log.js';
import { BudgetLedger } from '../src/budgets/ledger.js';

export interface RunStarterClients {
  knex: Knex;
  models: Models;
  /** The worker's command connection (the run protocol's): budgets are read on it. */
  redis: ScriptedRedis;
  /** The worker's web-side run engine (built once, in workers/start.ts): runs start through it. */
  engine: WebEngine;
  metrics?: Metrics;
}

/** The web's RunService, built from a worker's clients: schedules' ticks and evals' items start runs exactly as POST /api/runs does. */
export function workerRunService(config: Config, { knex, models, redis, engine, metrics }: RunStarterClients): RunService {
  const files = new FileService(knex, models.File, new PostgresFileStorage(knex), new ImageProcessor(imageLimits(config.files)), config.files);
  return new RunService(models, new ConversationService(models, files), files, engine, runLimits(config), new AuditLog(knex), metrics ?? new Metrics(config.metrics.enabled), new BudgetLedger(redis, redisKeys(config.redis)));
}
