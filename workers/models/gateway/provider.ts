import { setTimeout as sleep } from 'node:timers/promises';
import type { GatewayConfig } from '../../../src/config.js';
import type { Logger } from '../../../src/logger.js';
import type { Metrics } from '../../../src/metrics/registry.js';
import type { ApiFormat } from '../../../src/shared/model-settings.js';
import { RunFailure } from '../../runs/run-control.js';
import type { ModelProvider, ModelRequest, ModelResult, ModelSink, PlanNode, PlanRequest, SummaryRequest } from '../types.js';
import { summaryMessages } from './summary.js';
import { extractiveSummary } from '../../../src/shared/context-window.js';
import { GatewayCallError, judge, retryDecision, type Verdict } from '../../../src/shared/gateway-policy.js';
import { GatewayTransport, toCallError, type FormatClient, type FormatResult } from './transport.js';
import { completionText, estimatedUsage, promptText } from '../usage-estimate.js';
import { streamChat } from './chat.js';
import { streamResponses } from './responses.js';
import { streamNative } from './native.js';
import { planMessages, readPlan } from './planner.js';
import { ImageSlots, inlineImages, type InlinedImages } from './transcript.js';

const FORMATS: Record<ApiFormat, FormatClient> = { chat: streamChat, responses: streamResponses, native: streamNative };

/** A call that ran out of attempts (or was never worth retrying): how the run ends, unless a fallback model takes over. */
class GaveUp extends Error {
  constructor(readonly verdict: Verdict) {
    super(verdict.message);
  }
}

/** A sink that remembers whether the client has seen any of the model's output: after that, a retry would repeat it. */
function watchedSink(sink: ModelSink) {
  const state = { emitted: false };
  const tracked: ModelSink = {
    token: (text) => ((state.emitted = true), sink.token(text)),
    thought: (text) => ((state.emitted = true), sink.thought(text)),
    notice: (text) => sink.notice(text),
  };
  return { sink: tracked, state };
}

/**
 * DESIGN §21: a server that reports no usage (many OpenAI-compatible ones stream none) is charged
 * the estimate: the prompt sent (messages and tool definitions) and the text and tool calls it produced.
 */
async function charged(request: ModelRequest, result: FormatResult): Promise<ModelResult> {
  if (result.usage) return { ...result, usage: result.usage };
  const tools = request.tools.map((t) => JSON.stringify({ name: t.name, description: t.description, parameters: t.parameters }));
  const prompt = [promptText(request.messages), ...tools].join('\n');
  return { ...result, usage: await estimatedUsage(prompt, completionText(result.text, result.toolCalls)) };
}

/**
 * Models behind the companion gateway (DESIGN §6), in the agent's wire format. 429, 500 and 503
 * (and a gateway that is unreachable or goes silent) are retried with exponential backoff and
 * jitter, honouring Retry-After, until the first output reaches the client; 503 that outlasts
 * the retries moves to GATEWAY_FALLBACK_MODEL; the rest end the run with an `error` event.
 */
export class GatewayModel implements ModelProvider {
  readonly deterministic = false;

  private readonly transport: GatewayTransport;

  constructor(
    private readonly config: GatewayConfig & { url: string; dagMaxNodes?: number },
    private readonly logger: Logger,
    private readonly metrics: Metrics,
    private readonly random: () => number = Math.random,
  ) {
    this.transport = new GatewayTransport({ url: config.url.replace(/\/+$/, ''), apiKey: config.apiKey, idleTimeoutMs: config.idleTimeoutMs });
  }

  close(): Promise<void> {
    return this.transport.close();
  }

  async complete(request: ModelRequest, sink: ModelSink): Promise<ModelResult> {
    const fallback = this.config.fallbackModel;
    const images = await inlineImages(request.messages, request.imageSource);
    try {
      return await this.withRetries(request.model, request, sink, images);
    } catch (err) {
      if (!(err instanceof GaveUp)) throw err;
      if (err.verdict.code !== 'gateway_unavailable' || !fallback || fallback === request.model) throw this.failure(err.verdict);
      await sink.notice(`Model "${request.model}" is unavailable (503 after ${this.config.maxRetries + 1} attempts); continuing with the fallback model "${fallback}".`);
      (request.log ?? this.logger).warn({ model: request.model, fallback }, 'gateway model unavailable; falling back');
      try {
        return await this.withRetries(fallback, request, sink, images);
      } catch (fallbackErr) {
        throw fallbackErr instanceof GaveUp ? this.failure(fallbackErr.verdict) : fallbackErr;
      }
    }
  }

  async plan(request: PlanRequest): Promise<{ nodes: PlanNode[]; usage: ModelResult['usage'] }> {
    const silent: ModelSink = { token: async () => {}, thought: async () => {}, notice: async () => {} };
    const { dagMaxNodes } = this.config;
    const result = await this.complete({ ...request, messages: planMessages(request.query, dagMaxNodes, request.images), tools: [] }, silent);
    return { nodes: readPlan(result.text, request.query, dagMaxNodes), usage: result.usage };
  }

  /**
   * The conversation's summary, extended by the model (DESIGN §20), silently; a reply with no text
   * (a reasoning model that spent max_tokens thinking) keeps the deterministic summary instead.
   */
  async summarize(request: SummaryRequest): Promise<{ text: string; usage: ModelResult['usage'] }> {
    const silent: ModelSink = { token: async () => {}, thought: async () => {}, notice: async () => {} };
    const result = await this.complete({ ...request, messages: summaryMessages(request.previous, request.messages, request.settings.maxTokens), tools: [] }, silent);
    const text = result.text.trim();
    return { text: text || extractiveSummary(request.previous, request.messages), usage: result.usage };
  }

  private failure(verdict: Verdict): RunFailure {
    return new RunFailure(verdict.code, verdict.message, verdict.transient);
  }

  private async withRetries(model: string, request: ModelRequest, sink: ModelSink, images: InlinedImages): Promise<ModelResult> {
    for (let retry = 0; ; retry++) {
      const watched = watchedSink(sink);
      try {
        const result = await FORMATS[request.settings.apiFormat]({ model, request, sink: watched.sink, transport: this.transport, images: new ImageSlots(images) });
        request.signal.throwIfAborted();
        return await charged(request, result);
      } catch (err) {
        request.signal.throwIfAborted();
        const failure = toCallError(err, this.transport);
        if (!(failure instanceof GatewayCallError)) throw failure;
        // Once the client has seen output, another attempt would repeat it.
        const { verdict, delayMs: delay } = watched.state.emitted ? { verdict: judge(failure, model) } : retryDecision(failure, model, retry, this.config, this.random);
        if (delay === undefined) throw new GaveUp(verdict);
        (request.log ?? this.logger).warn({ model, code: verdict.code, retry: retry + 1, delay_ms: Math.round(delay) }, 'gateway call failed; retrying');
        this.metrics.gatewayRetries.inc({ reason: verdict.code });
        await sleep(delay, undefined, { signal: request.signal });
      }
    }
  }
}
