/**
 * The sampling parameters an OpenAI-style client sends (DESIGN §16), kept with its run and applied
 * to the run's model calls where the agent allows (src/shared/model-settings.ts `withSampling`).
 */
export interface Sampling {
  temperature?: number;
  top_p?: number;
  /** Caps the agent's own max_tokens; never raises it. */
  max_tokens?: number;
  stop?: string[];
  seed?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
}
