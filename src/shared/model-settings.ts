import * as v from 'valibot';
import type { Sampling } from './sampling.js';
import type { OutputFormat } from './output-schema.js';

/**
 * How an agent talks to its model (spec: Model gateway endpoints; DESIGN §6). The web tier
 * validates these when an agent is saved; the workers read them back from the agents row.
 */

export const LOCAL_MODEL = 'local';
/** What a model name may be: an agent's `model`, and the key of its price (DESIGN §18). */
export const MODEL_NAME = /^[A-Za-z0-9._:/@-]{1,200}$/;
export const MODEL_NAME_RULE = 'must be 1-200 of [A-Za-z0-9._:/@-]';
export const API_FORMATS = ['chat', 'responses', 'native'] as const;
export type ApiFormat = (typeof API_FORMATS)[number];
export const REASONING_EFFORTS = ['minimal', 'low', 'medium', 'high'] as const;
export type ReasoningEffort = (typeof REASONING_EFFORTS)[number];

/** The tool entries the gateway itself runs, in the spec's shapes. */
export const GatewayToolSchema = v.variant('type', [
  v.strictObject({ type: v.literal('web_search_preview') }),
  v.strictObject({
    type: v.literal('mcp'),
    server_label: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 of [A-Za-z0-9_-]')),
    server_url: v.pipe(v.string(), v.url(), v.regex(/^https?:\/\//, 'must be an http(s) URL'), v.maxLength(2000)),
  }),
]);
export type GatewayTool = v.InferOutput<typeof GatewayToolSchema>;

/** What a model call needs besides messages and tools; one agent's settings. */
export interface GenerationSettings {
  apiFormat: ApiFormat;
  reasoningEffort?: ReasoningEffort;
  thinkingBudget?: number;
  maxTokens?: number;
  gatewayTools: GatewayTool[];
  /** A client's sampling parameters for this run (DESIGN §16); max_tokens is folded into maxTokens. */
  sampling?: Omit<Sampling, 'max_tokens'>;
  /** DESIGN §23: set on the calls whose text is the run's final answer, when that must be JSON (the provider's structured-output parameter). */
  outputFormat?: OutputFormat;
}

/** The settings as the agents row (and the body that creates it) spell them. */
export interface StoredSettings {
  api_format: ApiFormat;
  reasoning_effort: ReasoningEffort | null;
  thinking_budget: number | null;
  max_tokens: number | null;
  gateway_tools: GatewayTool[];
}

export function generationSettings(stored: StoredSettings): GenerationSettings {
  return {
    apiFormat: stored.api_format,
    reasoningEffort: stored.reasoning_effort ?? undefined,
    thinkingBudget: stored.thinking_budget ?? undefined,
    maxTokens: stored.max_tokens ?? undefined,
    gatewayTools: stored.gateway_tools,
  };
}

/**
 * A run's settings with its client's sampling parameters: max_tokens may only lower the agent's
 * limit; the others are not sent for an agent that reasons (reasoning models refuse them).
 */
export function withSampling(settings: GenerationSettings, sampling: Sampling | null): GenerationSettings {
  if (!sampling) return settings;
  const { max_tokens: asked, ...rest } = sampling;
  const maxTokens = asked === undefined ? settings.maxTokens : Math.min(asked, settings.maxTokens ?? asked);
  const reasons = settings.reasoningEffort !== undefined || settings.thinkingBudget !== undefined;
  return { ...settings, maxTokens, sampling: reasons || Object.keys(rest).length === 0 ? undefined : rest };
}

/** Runs without an agent. */
export const DEFAULT_SETTINGS: GenerationSettings = { apiFormat: 'chat', gatewayTools: [] };

export interface ModelFamilies {
  /** Models that must carry a web_search_preview or mcp tool. */
  deepResearch: RegExp;
  /** The family that accepts reasoning effort `minimal` (others refuse it). */
  minimalEffort: RegExp;
}

export interface SettingsProblem {
  field: 'model' | 'api_format' | 'reasoning_effort' | 'thinking_budget' | 'gateway_tools';
  message: string;
}

/**
 * The rules that span fields, so an agent the gateway would refuse is refused when it is saved
 * (422), not when it runs.
 */
export function settingsProblems(model: string, settings: GenerationSettings, families: ModelFamilies, gatewayConfigured: boolean): SettingsProblem[] {
  const problems: SettingsProblem[] = [];
  if (model === LOCAL_MODEL) return problems;
  if (!gatewayConfigured) problems.push({ field: 'model', message: `model "${model}" needs the model gateway, and none is configured (GATEWAY_URL); use "${LOCAL_MODEL}"` });
  const { apiFormat, reasoningEffort, thinkingBudget, gatewayTools } = settings;
  if (reasoningEffort === 'minimal' && !families.minimalEffort.test(model)) {
    problems.push({ field: 'reasoning_effort', message: `"minimal" is not accepted by model "${model}"; use low, medium or high` });
  }
  if (reasoningEffort && apiFormat === 'native') problems.push({ field: 'reasoning_effort', message: 'the native format takes thinking_budget, not reasoning_effort' });
  if (thinkingBudget !== undefined && apiFormat !== 'native') problems.push({ field: 'thinking_budget', message: 'thinking_budget applies to the native format only' });
  if (gatewayTools.length > 0 && apiFormat === 'native') problems.push({ field: 'gateway_tools', message: 'the native format cannot carry web_search_preview or mcp tools' });
  if (families.deepResearch.test(model) && gatewayTools.length === 0) {
    problems.push({ field: 'gateway_tools', message: `deep-research model "${model}" needs a web_search_preview or mcp tool` });
  }
  return problems;
}
