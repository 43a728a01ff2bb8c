import Koa from 'koa';
import type Router from '@koa/router';
import type { Services } from './services.js';
import { mountRoutes, type AppState, type BodyReader, type Route } from './auth/route.js';
import { closeUnreadBodies, errorResponses, jsonLastResort, methodsAllowed, requestContext, securityHeaders } from './http/middleware.js';
import { jsonBody } from './http/body.js';
import { speaksOpenAi } from './http/openai-errors.js';
import { healthRoutes } from './routes/health.js';
import { authRoutes } from './routes/auth.js';
import { apiKeyRoutes } from './routes/api-keys.js';
import { chatRoutes } from './routes/chat.js';
import { runRoutes } from './routes/runs.js';
import { conversationRoutes } from './routes/conversations.js';
import { agentRoutes } from './routes/agents.js';
import { knowledgeBaseRoutes } from './routes/knowledge-bases.js';
import { kbDocumentRoutes } from './routes/kb-documents.js';
import { fileRoutes } from './routes/files.js';
import { openAiRoutes } from './routes/openai.js';
import { connectorRoutes } from './routes/connectors.js';
import { webhookRoutes } from './routes/webhooks.js';
import { scheduleRoutes } from './routes/schedules.js';
import { datasetRoutes } from './routes/datasets.js';
import { evalRoutes } from './routes/evals.js';
import { memoryRoutes } from './routes/memories.js';
import { adminUserRoutes } from './routes/admin-users.js';
import { adminKeyRoutes } from './routes/admin-keys.js';
import { adminRunRoutes } from './routes/admin-runs.js';
import { adminOperationsRoutes } from './routes/admin-operations.js';
import { adminModelPriceRoutes } from './routes/admin-model-prices.js';
import { mcpRoutes } from './routes/mcp.js';
import { docsRoutes } from './routes/docs.js';
import { consoleRoutes } from './routes/console.js';
import { queueDashboard } from './admin/dashboard.js';
import { corsFor } from './http/cors.js';
import { metricsRoute, requestMetrics, scrapeGuard } from './metrics/http.js';
import { traceRequests } from './http/tracing.js';

/** Items uploads (DESIGN §24) in the body (JSON, JSONL or CSV) are bound by DATASET_UPLOAD_MAX_BYTES, as multipart ones. */
const DATASET_ITEMS_PATH = /^\/api\/datasets\/[^/]+\/items$/;

/** Every route's declaration, group by group (one file each under routes/), and the OpenAPI document of them all. */
export function apiRoutes(services: Services): Route[] {
  const declared = [
    ...healthRoutes(services),
    ...authRoutes(services),
    ...apiKeyRoutes(services),
    ...chatRoutes(services),
    ...runRoutes(services),
    ...conversationRoutes(services),
    ...agentRoutes(services),
    ...knowledgeBaseRoutes(services),
    ...kbDocumentRoutes(services),
    ...fileRoutes(services),
    ...openAiRoutes(services),
    ...connectorRoutes(services),
    ...webhookRoutes(services),
    ...scheduleRoutes(services),
    ...datasetRoutes(services),
    ...evalRoutes(services),
    ...memoryRoutes(services),
    ...adminUserRoutes(services),
    ...adminKeyRoutes(services),
    ...adminRunRoutes(services),
    ...adminOperationsRoutes(services),
    ...adminModelPriceRoutes(services),
    ...mcpRoutes(services),
    ...(services.metrics.enabled ? [metricsRoute(services.metrics, scrapeGuard(services.config.metrics.token, services.authenticator))] : []),
  ];
  const all: Route[] = [...declared, ...docsRoutes(() => all), ...consoleRoutes()];
  return all;
}

/** The routers serving the API; tests walk their layers to feed every route hostile input. */
export function apiRouters(services: Services): Router[] {
  return [mountRoutes(apiRoutes(services), services.authenticator, services.rateLimiter, bodyReader(services)) as unknown as Router];
}

/** JSON bodies, read by each route once its credential is checked; large ones parsed off the event loop (DESIGN §21). */
function bodyReader({ config, cpu }: Pick<Services, 'config' | 'cpu'>): BodyReader {
  // An OpenAI client sends its images inline (base64 data: URLs, DESIGN §16): /v1/* takes one of FILE_MAX_BYTES besides the text.
  const clientBodyLimit = Math.max(config.bodyLimitBytes, Math.ceil((config.files.maxBytes * 4) / 3) + config.bodyLimitBytes);
  return jsonBody((path) => (speaksOpenAi(path) ? clientBodyLimit : DATASET_ITEMS_PATH.test(path) ? Math.max(config.bodyLimitBytes, config.evals.uploadMaxBytes) : config.bodyLimitBytes), config.bodyIdleTimeoutMs, { bytes: (bytes) => cpu.parseJsonBytes(bytes) }, (path) => DATASET_ITEMS_PATH.test(path));
}

export function createApp(services: Services, routers: Router[] = apiRouters(services)): Koa<AppState> {
  const app = new Koa<AppState>();
  // The client address is the entry TRUST_PROXY_HOPS from the right of X-Forwarded-For (DESIGN §12);
  // entries further left were written by the client and are never trusted.
  app.proxy = services.config.trustProxyHops > 0;
  app.maxIpsCount = services.config.trustProxyHops;
  app.silent = true;
  jsonLastResort(app, services.logger);
  const { metrics, config } = services;
  // First, so a request's span covers all the rest and is the parent of a run it starts (DESIGN §18).
  if (config.tracing) app.use(traceRequests());
  if (metrics.enabled) app.use(requestMetrics(metrics));
  app.use(requestContext(services.logger));
  app.use(securityHeaders());
  const cors = corsFor(config.corsOrigins);
  if (cors) app.use(cors);
  app.use(closeUnreadBodies());
  app.use(errorResponses());
  // The queue dashboard reads its own request bodies (bull-board's actions, the login form) once it has a credential.
  app.use(queueDashboard({ ...services, jwtSecret: config.jwt.secret, issuer: config.jwt.issuer, runQueue: services.queue, bodyIdleTimeoutMs: config.bodyIdleTimeoutMs }));
  app.use(methodsAllowed(routers));
  for (const router of routers) app.use(router.routes());
  return app;
}
