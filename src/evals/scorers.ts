import * as v from 'valibot';
import { MODEL_NAME, MODEL_NAME_RULE } from '../shared/model-settings.js';
import { outputSchemaValue } from '../http/validation.js';

/**
 * Scorers (DESIGN §24): what an eval measures in each answer, each giving a score in 0..1. The web
 * checks them when the eval is created; workers score with them (workers/evals/scoring.ts).
 */
export const SCORER_TYPES = ['exact', 'contains', 'regex', 'numeric', 'json_schema', 'cites', 'llm_judge'] as const;
export type ScorerType = (typeof SCORER_TYPES)[number];

export const SCORERS_MAX = 10;
export const REGEX_MAX_CHARS = 500;
export const RUBRIC_MAX_CHARS = 4000;

const compiles = (pattern: string, flags = '') => {
  try {
    new RegExp(pattern, flags);
    return true;
  } catch {
    return false;
  }
};

/** The key its scores and mean are reported under: its `name`, or its type. */
const common = {
  name: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.-]{1,64}$/, 'a scorer name is 1-64 of [A-Za-z0-9_.-]'))),
  /** The score an item needs on this scorer to pass; 1 unless said (0.7 for llm_judge). */
  threshold: v.optional(v.pipe(v.number(), v.finite(), v.minValue(0), v.maxValue(1))),
};

const regexScorer = v.pipe(
  v.strictObject({
    type: v.literal('regex'),
    ...common,
    /** Absent: each item's `expected` (a string) is the pattern. */
    pattern: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(REGEX_MAX_CHARS))),
    flags: v.optional(v.pipe(v.string(), v.regex(/^[imsu]{0,4}$/, 'flags are some of i, m, s, u'))),
  }),
  v.forward(
    v.check((s) => s.pattern === undefined || compiles(s.pattern, s.flags), 'pattern is not a valid regular expression'),
    ['pattern'],
  ),
);

export const scorerSchema = v.variant(
  'type',
  [
    v.strictObject({ type: v.literal('exact'), ...common, ignore_case: v.optional(v.boolean()) }),
    v.strictObject({ type: v.literal('contains'), ...common, ignore_case: v.optional(v.boolean()) }),
    regexScorer,
    v.strictObject({
      type: v.literal('numeric'),
      ...common,
      /** How far from `expected` a number may be: absolute, or a fraction of `expected` when `relative`. */
      tolerance: v.optional(v.pipe(v.number(), v.finite(), v.minValue(0), v.maxValue(1e12))),
      relative: v.optional(v.boolean()),
    }),
    v.strictObject({ type: v.literal('json_schema'), ...common, schema: v.pipe(outputSchemaValue, v.check((s) => s !== null, 'schema is required')) }),
    v.strictObject({
      type: v.literal('cites'),
      ...common,
      /** How many citations the answer needs (1 unless said). */
      min: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100))),
    }),
    v.strictObject({
      type: v.literal('llm_judge'),
      ...common,
      model: v.pipe(v.string(), v.trim(), v.regex(MODEL_NAME, MODEL_NAME_RULE)),
      rubric: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(RUBRIC_MAX_CHARS)),
    }),
  ],
  `type must be one of ${SCORER_TYPES.map((t) => `"${t}"`).join(', ')}`,
);
export type Scorer = v.InferOutput<typeof scorerSchema>;

export const scorerName = (scorer: Scorer): string => scorer.name ?? scorer.type;
export const scorerThreshold = (scorer: Scorer): number => scorer.threshold ?? (scorer.type === 'llm_judge' ? 0.7 : 1);

/** One to SCORERS_MAX scorers, each reported under a name of its own. */
export const scorersSchema = v.pipe(
  v.array(scorerSchema),
  v.minLength(1, 'give at least one scorer'),
  v.maxLength(SCORERS_MAX, `at most ${SCORERS_MAX} scorers`),
  v.check((scorers) => new Set(scorers.map(scorerName)).size === scorers.length, 'two scorers report under the same name: give one of them a `name`'),
);
