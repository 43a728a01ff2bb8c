import * as v from 'valibot';
import { clientToolsSchema } from '../shared/client-tools.js';
import type { Services } from '../services.js';
import { runLogFields } from '../logger.js';
import { route, type Route } from '../auth/route.js';
import { runEventStream, runStreamHeaders } from '../runs/records.js';
import type { RunMode } from '../db/models.js';
import { startAndStream, type OnClaimed } from '../runs/stream.js';
import { docMode, ensureOutputSchemas, imageIds, multitaskStrategy, outputSchema, uuidText } from '../http/validation.js';
import { schemaFormat } from '../shared/output-schema.js';

const optionalText = (max: number) => v.optional(v.nullable(v.pipe(v.string(), v.maxLength(max))));

/** The spec's ChatStreamRequest. user_metadata is kept with the run (and sent in its webhooks); doc_mode is how the run uses knowledge (DESIGN §14); image_ids are shown to the model (§15). */
const ChatStreamRequest = v.strictObject({
  q: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(32_000)),
  conversation_id: v.optional(v.nullable(uuidText)),
  agent_id: v.optional(v.nullable(uuidText)),
  token: optionalText(4096),
  image_ids: imageIds,
  user_metadata: optionalText(16_384),
  doc_mode: docMode,
  multitask_strategy: multitaskStrategy,
  /** DESIGN §23: the answer is JSON valid against this schema (overrides the agent's). */
  output_schema: outputSchema,
  client_tools: v.optional(clientToolsSchema),
});

const InjectBody = v.strictObject({
  conversation_id: uuidText,
  content: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(32_000)),
});

/** Runs as server-sent events, and injects into them: scope `chat`. */
export function chatRoutes({ runs, relay, openStreams, metrics, cpu }: Services): Route[] {
  const streaming = (mode: RunMode) =>
    route({
      method: 'POST',
      path: `/api/${mode}`,
      summary: `Run a ${mode === 'react' ? 'ReAct' : 'DAG'} agent query, streamed as server-sent events`,
      auth: { scope: 'chat', bodyToken: true },
      responses: { 200: runEventStream },
      responseHeaders: runStreamHeaders,
      errors: [404, 409, 429],
      body: ChatStreamRequest,
      streams: true,
      handle: async ({ principal, body, ctx }) => {
        await ensureOutputSchemas(cpu, [[['output_schema'], body.output_schema]]);
        const firstToken = metrics.firstToken.startTimer({ mode });
        const start = (onClaimed: OnClaimed) => runs.start({ userId: principal.user.id, mode, query: body.q, conversationId: body.conversation_id, agentId: body.agent_id, userMetadata: body.user_metadata, docMode: body.doc_mode, imageIds: body.image_ids ?? undefined, requestId: ctx.state.requestId, budgets: principal.budgets, multitaskStrategy: body.multitask_strategy ?? undefined, outputFormat: body.output_schema ? schemaFormat(body.output_schema) : null, clientTools: body.client_tools }, onClaimed);
        const run = await startAndStream(ctx, relay, openStreams, start, () => firstToken());
        ctx.state.log = ctx.state.log.child(runLogFields(run));
      },
    });
  return [
    streaming('react'),
    streaming('dag'),
    route({
      method: 'POST',
      path: '/api/chat/inject',
      summary: "Inject a user message into the conversation's running execution",
      auth: { scope: 'chat' },
      responses: { 200: v.strictObject({}) },
      errors: [404, 409],
      body: InjectBody,
      handle: async ({ principal, body }) => {
        await runs.inject(principal.user.id, body.conversation_id, body.content);
        return {};
      },
    }),
  ];
}
