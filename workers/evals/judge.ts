import type { ModelProvider, ModelSink } from '../models/types.js';
import { DEFAULT_SETTINGS } from '../../src/shared/model-settings.js';
import type { Judge } from './scoring.js';

/** How long one judgement may take before the item scores 0 on it. */
const JUDGE_TIMEOUT_MS = 60_000;
const QUIET: ModelSink = { token: async () => {}, thought: async () => {}, notice: async () => {} };

const INSTRUCTIONS =
  'You grade answers. Read the rubric, the question, the expected answer (if any) and the answer given. ' +
  'Reply with one whole number from 0 (fails the rubric) to 10 (meets it fully), and nothing else.';

/** The first whole or decimal number of the reply, 0..10, as 0..1; 0 when there is none. */
export function judgementOf(reply: string): number {
  const number = /\d+(?:\.\d+)?/.exec(reply)?.[0];
  if (number === undefined) return 0;
  return Math.min(10, Math.max(0, Number(number))) / 10;
}

/** llm_judge through a gateway model (DESIGN §24): the model is asked for a 0–10 score against the rubric. */
export function modelJudge(modelFor: (model: string) => ModelProvider): Judge {
  return async (scorer, item, answer) => {
    const expected = item.expected === null || item.expected === undefined ? '(none given)' : typeof item.expected === 'string' ? item.expected : JSON.stringify(item.expected);
    const result = await modelFor(scorer.model).complete(
      {
        model: scorer.model,
        settings: { ...DEFAULT_SETTINGS, maxTokens: 16 },
        messages: [
          { role: 'system', content: `${INSTRUCTIONS}\n\nRubric:\n${scorer.rubric}` },
          { role: 'user', content: `Question:\n${item.question}\n\nExpected answer:\n${expected}\n\nAnswer given:\n${answer.text}\n\nScore (0-10):` },
        ],
        tools: [],
        signal: AbortSignal.timeout(JUDGE_TIMEOUT_MS),
      },
      QUIET,
    );
    return judgementOf(result.text);
  };
}
