import * as v from 'valibot';
import type { Services } from '../services.js';
import { route, type Route } from '../auth/route.js';
import { uuidText } from '../http/validation.js';
import { ChatCompletionRequest, ResponseRequest, chatCompletionTurn, responseTurn } from '../openai/requests.js';
import { agentIdOf, findModel, listModels, modelIdOf } from '../openai/models.js';
import { ChatCompletionStream, chatCompletion } from '../openai/chat-completions.js';
import { ResponseStream, responseOfRun, responseOfTally } from '../openai/responses.js';
import { ClientRuns, type Followed } from '../openai/client-runs.js';
import { chatOutputFormat, responsesOutputFormat } from '../openai/output-format.js';
import { chatClientTools, responseClientTools } from '../openai/client-tools.js';
import { chatToolOutputs, responseToolOutputs } from '../openai/client-tool-messages.js';
import { RunEndedError } from '../shared/errors.js';
import type { RunTally } from '../runs/follow.js';

const SSE = { mediaType: 'text/event-stream', description: "OpenAI's stream" };
const ModelPath = v.object({ model: v.pipe(v.string(), v.maxLength(200)) });
const ResponsePath = v.object({ id: uuidText });

/** A run that ended without an answer, for a client waiting on one. */
function ended(tally: RunTally): RunEndedError {
  const cancelled = tally.status === 'cancelled';
  const code = tally.error?.code ?? (cancelled ? 'cancelled' : 'run_failed');
  return new RunEndedError(code, tally.error?.message ?? (cancelled ? 'The run was cancelled' : 'The run failed'), { cancelled, retryable: tally.error?.retryable ?? false });
}

/**
 * The OpenAI-compatible endpoints (DESIGN §16): agents as models, chat completions and responses
 * as ReAct runs through the same path as /api/react. Scope `chat`; errors in OpenAI's shape.
 */
export function openAiRoutes(services: Services): Route[] {
  const { runs, models, cpu } = services;
  const clientRuns = new ClientRuns(runs, services.relay, services.files, services.openStreams);
  const auth = { scope: 'chat' as const };
  return [
    route({
      method: 'GET',
      path: '/v1/models',
      summary: "The caller's agents as OpenAI models",
      auth,
      undocumented: true,
      responses: { 200: null },
      handle: async ({ principal }) => ({ object: 'list', data: await listModels(models, principal.user.id) }),
    }),
    route({
      method: 'GET',
      path: '/v1/models/:model',
      summary: 'One of the caller\'s agents as an OpenAI model',
      auth,
      undocumented: true,
      params: ModelPath,
      responses: { 200: null },
      handle: ({ principal, params }) => findModel(models, principal.user.id, params.model),
    }),
    route({
      method: 'POST',
      path: '/v1/chat/completions',
      summary: 'An OpenAI chat completion answered by an agent (a ReAct run)',
      auth,
      undocumented: true,
      body: ChatCompletionRequest,
      streams: true,
      responses: { 200: SSE },
      errors: [400, 404, 409],
      handle: async ({ principal, body, ctx }) => {
        const clientTools = chatClientTools(body);
        const outputFormat = await chatOutputFormat(body.response_format, cpu);
        // Tool results answering a run parked on those calls resume it (DESIGN §23); otherwise a new run over the history.
        const outputs = chatToolOutputs(body.messages);
        const parked = outputs ? await runs.findRequiringAction(principal.user.id, outputs.map((o) => o.call_id)) : undefined;
        const followed: Followed = parked
          ? await clientRuns.resume(ctx, parked, outputs!)
          : { run: await clientRuns.start(ctx, { userId: principal.user.id, budgets: principal.budgets, agentId: agentIdOf(body.model), turn: chatCompletionTurn(body, clientTools), outputFormat }), afterId: '0-0' };
        const { run } = followed;
        // A resumed run keeps the output format it was started with.
        const structured = outputFormat !== null || run.output_format != null;
        if (body.stream) {
          clientRuns.stream(ctx, followed, (sse) => new ChatCompletionStream(sse, run, body.model, body.stream_options?.include_usage === true, structured));
          return undefined;
        }
        const tally = await clientRuns.finish(ctx, followed);
        if (!tally) return undefined;
        if (!tally.parked && tally.status !== 'succeeded') throw ended(tally);
        return chatCompletion(run, body.model, tally);
      },
    }),
    route({
      method: 'POST',
      path: '/v1/responses',
      summary: 'An OpenAI response answered by an agent (a ReAct run); previous_response_id continues its conversation',
      auth,
      undocumented: true,
      body: ResponseRequest,
      streams: true,
      responses: { 200: SSE },
      errors: [400, 404, 409],
      handle: async ({ principal, body, ctx }) => {
        const clientTools = responseClientTools(body);
        const outputFormat = await responsesOutputFormat(body.text, cpu);
        const outputs = responseToolOutputs(body.input, body.previous_response_id);
        const agentId = agentIdOf(body.model);
        const previous = body.previous_response_id ? await runs.ownRun(principal.user.id, body.previous_response_id) : undefined;
        // function_call_output items answer the calls the previous response (its run) parked on: the same run resumes (DESIGN §23).
        const followed: Followed =
          previous && outputs
            ? await clientRuns.resume(ctx, previous, outputs)
            : { run: await clientRuns.start(ctx, { userId: principal.user.id, budgets: principal.budgets, agentId, conversationId: previous?.conversation_id, turn: responseTurn(body, clientTools), outputFormat }), afterId: '0-0' };
        const { run } = followed;
        const previousId = previous?.id ?? null;
        const structured = outputFormat !== null || run.output_format != null;
        if (body.stream) {
          clientRuns.stream(ctx, followed, (sse, tally) => new ResponseStream(sse, run, body.model, previousId, tally, structured));
          return undefined;
        }
        const tally = await clientRuns.finish(ctx, followed);
        if (!tally) return undefined;
        return responseOfTally(run, body.model, tally, previousId);
      },
    }),
    route({
      method: 'GET',
      path: '/v1/responses/:id',
      summary: 'A response (a run) as it is now',
      auth,
      undocumented: true,
      params: ResponsePath,
      responses: { 200: null },
      handle: async ({ principal, params }) => {
        const run = await runs.ownRun(principal.user.id, params.id);
        return responseOfRun(run, modelIdOf(run.agent_id));
      },
    }),
    route({
      method: 'POST',
      path: '/v1/responses/:id/cancel',
      summary: 'Cancel a response (its run) while it is queued or running',
      auth,
      undocumented: true,
      params: ResponsePath,
      responses: { 200: null },
      errors: [409],
      handle: async ({ principal, params }) => {
        const run = await runs.cancel(principal.user.id, params.id);
        return responseOfRun(run, modelIdOf(run.agent_id));
      },
    }),
  ];
}
