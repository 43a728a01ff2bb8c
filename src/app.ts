import Koa from 'koa';
import type Router from '@koa/router';
import type { Services } from './services.js';
import { errorResponses, requestContext } from './http/middleware.js';
import { jsonBody } from './http/body.js';
import { healthRoutes } from './routes/health.js';
import { authRoutes } from './routes/auth.js';
import { apiKeyRoutes } from './routes/api-keys.js';
import { chatRoutes } from './routes/chat.js';
import { runRoutes } from './routes/runs.js';
import { conversationRoutes } from './routes/conversations.js';
import { agentRoutes } from './routes/agents.js';
import { knowledgeBaseRoutes } from './routes/knowledge-bases.js';
import { kbDocumentRoutes } from './routes/kb-documents.js';

export function createApp(services: Services): Koa {
  const app = new Koa();
  // Behind Heroku's router the client address comes from X-Forwarded-For.
  app.proxy = services.config.nodeEnv === 'production';
  app.silent = true;
  app.use(requestContext(services.logger));
  app.use(errorResponses());
  app.use(jsonBody(services.config.bodyLimitBytes));
  const routers: Router[] = [
    healthRoutes(services),
    authRoutes(services),
    apiKeyRoutes(services),
    chatRoutes(services),
    runRoutes(services),
    conversationRoutes(services),
    agentRoutes(services),
    knowledgeBaseRoutes(services),
    kbDocumentRoutes(services),
  ];
  for (const router of routers) app.use(router.routes()).use(router.allowedMethods({ throw: true }));
  return app;
}
