import { withinTime } from '../../src/shared/time-bound.js';
import { inlineCpu, type CpuWork } from '../../src/cpu/work.js';
import { LOCAL_MODEL } from '../../src/shared/model-settings.js';
import { scorerName, scorerThreshold, type Scorer } from '../../src/evals/scorers.js';

/** What an item's run answered, as the scorers read it. */
export interface Answer {
  text: string;
  /** The structured output of a run with an output schema (DESIGN §23), if any. */
  output: unknown;
  citations: unknown[];
}

export interface ScoredItem {
  question: string;
  expected: unknown;
}

/** Asks a model how well the answer meets the rubric; 0..1. */
export type Judge = (scorer: Extract<Scorer, { type: 'llm_judge' }>, item: ScoredItem, answer: Answer) => Promise<number>;

/** Text past this is not searched by regex, number and containment scorers: an answer's length cannot make scoring slow. */
const SCORED_TEXT_MAX = 100_000;
/** A pattern that runs longer than this on one answer scores 0 (a user's regular expression may backtrack without end). */
const REGEX_TIMEOUT_MS = 50;

const expectedText = (expected: unknown): string => (typeof expected === 'string' ? expected : expected === null || expected === undefined ? '' : JSON.stringify(expected));
const normalized = (text: string, ignoreCase: boolean) => {
  const collapsed = text.trim().replace(/\s+/g, ' ');
  return ignoreCase ? collapsed.toLowerCase() : collapsed;
};

/** The answer as JSON: its structured output, or its text (inside a ```json fence or not); undefined when it is not JSON. */
function answerJson(answer: Answer): unknown {
  if (answer.output !== null && answer.output !== undefined) return answer.output;
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(answer.text)?.[1] ?? answer.text;
  try {
    return JSON.parse(fenced.trim());
  } catch {
    return undefined;
  }
}

/** JSON with its object keys sorted, so equal values compare equal as text. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** A user's pattern, run where a timeout can stop it. */
function matches(pattern: string, flags: string, text: string): boolean {
  try {
    const matched = withinTime(REGEX_TIMEOUT_MS, () => new RegExp(pattern, flags).test(text));
    return matched.done && matched.value;
  } catch {
    return false;
  }
}

const NUMBER = /-?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?|-?\.\d+/g;
const numbersIn = (text: string) => [...text.slice(0, SCORED_TEXT_MAX).matchAll(NUMBER)].map((m) => Number(m[0].replace(/,/g, ''))).filter(Number.isFinite);

/** The item's score on one scorer, 0..1. */
export async function scoreOne(scorer: Scorer, item: ScoredItem, answer: Answer, judge: Judge, check: CpuWork['checkOutput'] = inlineCpu.checkOutput): Promise<number> {
  const text = answer.text.slice(0, SCORED_TEXT_MAX);
  switch (scorer.type) {
    case 'exact': {
      if (typeof item.expected !== 'string' && item.expected !== null && item.expected !== undefined) {
        const json = answerJson(answer);
        return json !== undefined && canonical(json) === canonical(item.expected) ? 1 : 0;
      }
      const ignoreCase = scorer.ignore_case ?? false;
      return normalized(text, ignoreCase) === normalized(expectedText(item.expected), ignoreCase) ? 1 : 0;
    }
    case 'contains': {
      const ignoreCase = scorer.ignore_case ?? true;
      const wanted = (Array.isArray(item.expected) ? item.expected.map(expectedText) : [expectedText(item.expected)]).filter(Boolean);
      if (wanted.length === 0) return 0;
      const haystack = normalized(text, ignoreCase);
      return wanted.filter((w) => haystack.includes(normalized(w, ignoreCase))).length / wanted.length;
    }
    case 'regex': {
      const pattern = scorer.pattern ?? expectedText(item.expected);
      return pattern && matches(pattern, scorer.flags ?? '', text) ? 1 : 0;
    }
    case 'numeric': {
      const expected = typeof item.expected === 'number' ? item.expected : Number(expectedText(item.expected).replace(/,/g, '').trim());
      if (!Number.isFinite(expected) || expectedText(item.expected).trim() === '') return 0;
      const tolerance = (scorer.tolerance ?? 0) * (scorer.relative ? Math.abs(expected) : 1);
      return numbersIn(text).some((n) => Math.abs(n - expected) <= tolerance + Number.EPSILON * Math.abs(expected)) ? 1 : 0;
    }
    case 'json_schema': {
      const json = answerJson(answer);
      if (json === undefined) return 0;
      return (await check({ type: 'json_schema', name: 'output', schema: scorer.schema!, strict: false }, JSON.stringify(json))).ok ? 1 : 0;
    }
    case 'cites': {
      const min = scorer.min ?? 1;
      return Math.min(answer.citations.length, min) / min;
    }
    case 'llm_judge':
      return scorer.model === LOCAL_MODEL ? containmentJudgement(item, answer) : judge(scorer, item, answer);
  }
}

/** The local model's judgement (DESIGN §24): 1 when the answer contains what was expected (any case), else 0. */
export function containmentJudgement(item: ScoredItem, answer: Answer): number {
  const wanted = normalized(expectedText(item.expected), true);
  return wanted !== '' && normalized(answer.text.slice(0, SCORED_TEXT_MAX), true).includes(wanted) ? 1 : 0;
}

/** Every scorer's score of one answer, and whether it meets every threshold. */
export async function scoreAnswer(scorers: Scorer[], item: ScoredItem, answer: Answer, judge: Judge, check?: CpuWork['checkOutput']): Promise<{ scores: Record<string, number>; passed: boolean }> {
  const scores: Record<string, number> = {};
  let passed = true;
  for (const scorer of scorers) {
    const raw = await scoreOne(scorer, item, answer, judge, check);
    const score = Number.isFinite(raw) ? Math.min(1, Math.max(0, raw)) : 0;
    scores[scorerName(scorer)] = score;
    if (score < scorerThreshold(scorer)) passed = false;
  }
  return { scores, passed };
}

/** A failed item scores 0 on every scorer. */
export const zeroScores = (scorers: Scorer[]): Record<string, number> => Object.fromEntries(scorers.map((s) => [scorerName(s), 0]));
