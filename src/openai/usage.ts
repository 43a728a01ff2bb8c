import type { Usage } from '../shared/events.js';

/** A run's usage as OpenAI's chat API reports it. */
export const chatUsage = (usage: Usage) => ({
  prompt_tokens: usage.prompt_tokens,
  completion_tokens: usage.completion_tokens,
  total_tokens: usage.total_tokens,
  completion_tokens_details: { reasoning_tokens: usage.reasoning_tokens },
});

/** A run's usage as OpenAI's Responses API reports it. */
export const responseUsage = (usage: Usage) => ({
  input_tokens: usage.prompt_tokens,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: usage.completion_tokens,
  output_tokens_details: { reasoning_tokens: usage.reasoning_tokens },
  total_tokens: usage.total_tokens,
});
